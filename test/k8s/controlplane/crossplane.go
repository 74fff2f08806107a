package controlplane

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
)

// CrossplaneModule is the directory, in the Go module cache, of the
// Crossplane module crossplane-core is built from (tools/crossplane-core
// under root): its cluster/crds and cluster/charts are what the published
// image and Helm chart carry.
func CrossplaneModule(root, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/crossplane/crossplane/v2@"+version)
	cmd.Dir = filepath.Join(root, "tools", "crossplane-core")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download crossplane %s: %v", version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download crossplane %s: %v %s", version, err, out)
	}
	return mod.Dir, nil
}
