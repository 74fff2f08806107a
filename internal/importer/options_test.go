package importer

import (
	"slices"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestOwnedOptionsAgree: every option the importer replaces as bind-fn's
// own is one the model owns (extraOptions refuses it) or one BIND 9.20
// dropped; otherwise an import could drop an option a user may still set.
func TestOwnedOptionsAgree(t *testing.T) {
	for name := range ownedOptions {
		if _, ok := model.Owned(name); ok || slices.Contains(model.GoneIn920(), name) {
			continue
		}
		t.Errorf("the importer replaces %q as bind-fn's own, but the model does not own it (extraOptions can set it): carry it instead, or own it in model.ownedOptions", name)
	}
}
