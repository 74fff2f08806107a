module git.unkin.net/unkin/bind-fn/tools/age-keygen

go 1.26.8

require filippo.io/age v1.3.1

require (
	filippo.io/hpke v0.4.0 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	golang.org/x/term v0.37.0 // indirect
)
