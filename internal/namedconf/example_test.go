package namedconf_test

import (
	"fmt"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

func Example() {
	kw, str := namedconf.Kw, namedconf.Str
	notify, _ := namedconf.ParseServerEntry("192.0.2.1 port 5353 key xfr")
	var allow []namedconf.Stmt
	for _, s := range []string{"!10.1.0.0/16", "10.0.0.0/8", "key xfr"} {
		e, _ := namedconf.ParseElement(s)
		allow = append(allow, e.Stmt())
	}

	var f namedconf.File
	f.Comment("Rendered by bind-fn.")
	f.Add(namedconf.B([]namedconf.Word{kw("zone"), str(`a"; }; zone "evil`)},
		namedconf.S(kw("type"), kw("primary")),
		namedconf.S(kw("also-notify"), namedconf.L(notify.Stmt())),
		namedconf.B([]namedconf.Word{kw("allow-transfer")}, allow...),
	))
	out, err := f.Bytes()
	fmt.Print(string(out), err, "\n")

	f.Add(namedconf.B([]namedconf.Word{kw("zone"), str("x\n}; zone \"evil")}))
	_, err = f.Bytes()
	fmt.Println(err)
	// Output:
	// // Rendered by bind-fn.
	// zone "a\"; }; zone \"evil" {
	// 	type primary;
	// 	also-notify { 192.0.2.1 port 5353 key "xfr"; };
	// 	allow-transfer {
	// 		!10.1.0.0/16;
	// 		10.0.0.0/8;
	// 		key "xfr";
	// 	};
	// };
	// <nil>
	// cannot render named.conf: zone "x\n}; zone \"evil": word 2: string "x\n}; zone \"evil" contains control character U+000A (line break) at byte 1; named.conf strings may not contain control characters
}
