// Package version says which build of bind-fn is running: every binary's
// --version, `bind-fn version` and the agent's /status report it.
//
// `make build` builds with -buildvcs=false so that the same tree gives the
// same bytes (and image digests) on every commit; a release stamps its
// version and revision instead, as inputs of the build:
//
//	make build VERSION=v0.4.0 REVISION=$(git rev-parse HEAD)
//
// which passes -ldflags "-X .../internal/version.version=v0.4.0 -X
// .../internal/version.revision=...". Without them a build says "dev".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker (-X) in a release build; empty otherwise.
var (
	version  string
	revision string
)

// Info is what a build knows of itself.
type Info struct {
	// Version is the release version, else the module version a `go
	// install module@version` build records, else "dev".
	Version string `json:"version"`
	// Revision is the VCS revision stamped by the release build or by the
	// go command (-buildvcs), "" when unknown.
	Revision string `json:"revision,omitempty"`
	// Modified: the revision had uncommitted changes (go command's stamp).
	Modified bool `json:"modified,omitempty"`
	// Go is the Go release the binary was built with.
	Go string `json:"go"`
}

// Get is this binary's Info.
func Get() Info {
	return get(version, revision, debug.ReadBuildInfo)
}

func get(ver, rev string, read func() (*debug.BuildInfo, bool)) Info {
	i := Info{Version: ver, Revision: rev, Go: runtime.Version()}
	bi, ok := read()
	if ok {
		i.Go = bi.GoVersion
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Revision == "" {
					i.Revision = s.Value
				}
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if i.Version == "" {
		i.Version = "dev"
	}
	return i
}

// String is the one line --version prints after the program's name:
// "v0.4.0 (revision 0123abc, go1.26.8)", "dev (go1.26.8)".
func (i Info) String() string {
	if i.Revision == "" {
		return fmt.Sprintf("%s (%s)", i.Version, i.Go)
	}
	rev := i.Revision
	if i.Modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (revision %s, %s)", i.Version, rev, i.Go)
}

// Line is "<program> <String()>", what every binary's --version prints.
func Line(program string) string { return program + " " + Get().String() }
