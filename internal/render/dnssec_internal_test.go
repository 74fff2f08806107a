package render

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// TestKeyDirectoryIsTheAgents: the rendered key-directory is where the
// agent installs the keys.
func TestKeyDirectoryIsTheAgents(t *testing.T) {
	if primaryDir != layout.DNSSECKeySubdir {
		t.Errorf("named.conf key-directory is DataDir/%s, the agent installs keys into DataDir/%s", primaryDir, layout.DNSSECKeySubdir)
	}
}
