package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGet(t *testing.T) {
	info := func(mainVersion string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: mainVersion}, Settings: settings}, true
		}
	}
	cases := map[string]struct {
		reason   string
		ver, rev string
		read     func() (*debug.BuildInfo, bool)
		want     Info
		line     string
	}{
		"Dev": {reason: "make build: no stamp, no VCS information (-buildvcs=false)",
			read: info("(devel)"), want: Info{Version: "dev", Go: "go1.26.8"}, line: "dev (go1.26.8)"},
		"Release": {reason: "make build VERSION=... REVISION=...: the linker's stamp wins",
			ver: "v0.4.0", rev: "0123abc", read: info("(devel)"),
			want: Info{Version: "v0.4.0", Revision: "0123abc", Go: "go1.26.8"}, line: "v0.4.0 (revision 0123abc, go1.26.8)"},
		"GoInstall": {reason: "go install module@version records the module version",
			read: info("v0.3.1"), want: Info{Version: "v0.3.1", Go: "go1.26.8"}, line: "v0.3.1 (go1.26.8)"},
		"GoBuildVCS": {reason: "a plain go build in a checkout stamps the revision and whether it was modified",
			read: info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "feedbeef"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			want: Info{Version: "dev", Revision: "feedbeef", Modified: true, Go: "go1.26.8"}, line: "dev (revision feedbeef, modified, go1.26.8)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := get(tc.ver, tc.rev, tc.read)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			if got.String() != tc.line {
				t.Errorf("%s: String() = %q, want %q", tc.reason, got.String(), tc.line)
			}
		})
	}
}
