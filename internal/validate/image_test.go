package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestImageReferences: the image fields take a tag, a digest or both (how
// a release pins), and a malformed reference is an error at its field.
func TestImageReferences(t *testing.T) {
	cases := map[string]struct {
		reason     string
		image      string
		agentImage string
		want       []string // "field: message part"
	}{
		"Tag":          {reason: "the usual form", image: "example.org/bind9:9.20"},
		"Digest":       {reason: "pinned by digest alone", image: "example.org/bind9@" + testDigest},
		"TagAndDigest": {reason: "a release's form: the tag for the reader, the digest for the kubelet", image: "example.org/bind9:9.20@" + testDigest, agentImage: "example.org/agent:v1@" + testDigest},
		"RegistryPort": {reason: "a registry with a port is not a tag", image: "registry.local:5000/bind9:9.20@" + testDigest},
		"NoTag":        {reason: "the kubelet pulls latest", image: "bind9"},
		"ShortDigest": {reason: "a digest is 64 hex digits", image: "example.org/bind9:9.20@sha256:0123",
			want: []string{"spec.image: cannot use \"example.org/bind9:9.20@sha256:0123\" as an image reference"}},
		"UpperDigest": {reason: "digests are lower-case hex", image: "example.org/bind9@" + strings.ToUpper(testDigest),
			want: []string{"spec.image: cannot use"}},
		"TwoDigests": {reason: "one digest per reference", agentImage: "example.org/agent@" + testDigest + "@" + testDigest,
			want: []string{"spec.agent.image: cannot use"}},
		"UpperRepo": {reason: "repositories are lower case", agentImage: "Example.org/Agent:v1",
			want: []string{"spec.agent.image: cannot use \"Example.org/Agent:v1\""}},
		"Blank": {reason: "the existing check still names blanks", image: "bind9 latest",
			want: []string{"spec.image: cannot use \"bind9 latest\" as an image reference: it holds blanks"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &model.Cluster{Src: diag.Source{File: "cluster.yaml"}, Spec: v1alpha1.BindClusterSpec{
				Mode: v1alpha1.ModeAuthoritative, Replicas: 1,
				Image: or(tc.image, model.DefaultImage),
				Agent: &v1alpha1.AgentSpec{Image: or(tc.agentImage, model.DefaultAgentImage), ResolveIntervalSeconds: 5},
			}}
			var got []string
			for _, r := range checkClusterSpec(c) {
				if r.Severity == diag.Error && strings.Contains(r.Field, "image") {
					got = append(got, r.Field+": "+r.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%s\nerrors (-want +got):\n%s", tc.reason, cmp.Diff(tc.want, got))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("%s\nerror %q, want one starting %q", tc.reason, got[i], tc.want[i])
				}
			}
		})
	}
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
