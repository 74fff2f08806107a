package xfn_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// legacyXR is a cluster-scoped composite as Crossplane creates it for the
// claim team-a/auth: a generated name, the claim reference at spec level.
const legacyXR = `{
  "apiVersion": "xbind.unkin.net/v1alpha1", "kind": "XLegacyBindCluster",
  "metadata": {"name": "auth-x7k2p"},
  "spec": {
    CLAIM
    "compositionRef": {"name": "x"},
    "replicas": 2,
    "keys": [{"name": "xfr", "spec": {}}],
    "zones": [{"name": "example-com", "spec": {"zoneName": "example.com", "nameservers": ["ns1.example.com."],
      "records": [{"name": "ns1", "type": "A", "values": ["192.0.2.1"]}]}}]
  }
}`

const claimRef = `"claimRef": {"apiVersion": "xbind.unkin.net/v1alpha1", "kind": "BindClusterClaim", "namespace": "team-a", "name": "auth"},`

func legacy(claim string) string { return strings.Replace(legacyXR, "CLAIM", claim, 1) }

func withInput(r *fnv1.RunFunctionRequest, in string) *fnv1.RunFunctionRequest {
	r.Input = resource.MustStructJSON(in)
	return r
}

const wrapInput = `{"apiVersion": "fn.bind.unkin.net/v1alpha1", "kind": "Input", "objectWrapping": "ProviderKubernetes"}`

// placed is what the claim tests compare: where each desired object lands.
type placed struct {
	Results      []*fnv1.Result
	Requirements *fnv1.Requirements
	// Objects are kind namespace/name of each desired object, unwrapped,
	// prefixed with the wrapper's kind and name when wrapped.
	Objects    []string
	Status     map[string]any
	Connection map[string]string
}

func place(rsp *fnv1.RunFunctionResponse) placed {
	p := placed{Results: rsp.GetResults(), Requirements: rsp.GetRequirements()}
	for _, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource().AsMap()
		prefix := ""
		if xfn.IsObject(o) {
			md := o["metadata"].(map[string]any)
			pc := o["spec"].(map[string]any)["providerConfigRef"].(map[string]any)["name"]
			prefix = "Object " + md["name"].(string) + " (" + pc.(string) + ") > "
			o, _ = xfn.Unwrap(o)
		}
		md := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		p.Objects = append(p.Objects, prefix+o["kind"].(string)+" "+ns+"/"+md["name"].(string))
	}
	sort.Strings(p.Objects)
	if st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; st != nil {
		p.Status = st.GetStructValue().AsMap()["bind"].(map[string]any)
	}
	for k, v := range rsp.GetDesired().GetComposite().GetConnectionDetails() {
		if p.Connection == nil {
			p.Connection = map[string]string{}
		}
		p.Connection[k] = string(v)
	}
	return p
}

func objectsIn(ns string, wrapPrefix string) []string {
	var out []string
	for _, o := range []string{"ConfigMap %s/auth-config", "ConfigMap %s/auth-zones-0", "PodDisruptionBudget %s/auth", "Role %s/auth-agent", "RoleBinding %s/auth-agent",
		"Secret %s/auth-keys", "Secret %s/auth-xfr-tsig", "Secret %s/xfr-tsig", "Service %s/auth", "Service %s/auth-headless", "Service %s/auth-primary",
		"ServiceAccount %s/auth-agent", "StatefulSet %s/auth"} {
		s := sprintf(o, ns)
		if wrapPrefix != "" {
			kind, name, _ := strings.Cut(s, " ")
			res := strings.ToLower(kind) + "-" + name[strings.Index(name, "/")+1:]
			s = "Object " + wrapPrefix + "-" + res + " (default) > " + s
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func claimStatus(ns string) map[string]any {
	return map[string]any{
		"namespace": ns, "serveService": "auth", "serveAddress": "auth." + ns + ".svc", "primaryService": "auth-primary", "headlessService": "auth-headless",
		"configMap": "auth-config", "composedObjects": float64(13), "readyObjects": float64(0),
		"tsigSecrets": []any{"auth-xfr-tsig", "xfr-tsig"}, "zoneConfigMaps": []any{"auth-zones-0"},
	}
}

func claimConnection(ns string) map[string]string {
	return map[string]string{"namespace": ns, "port": "53", "primaryService": "auth-primary", "serveAddress": "auth." + ns + ".svc",
		"serveService": "auth", "tsigSecrets": "auth-xfr-tsig,xfr-tsig"}
}

func TestClaims(t *testing.T) {
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   placed
	}{
		"ClaimNamespaceAndName": {
			reason: "A claim's composite renders into the claim's namespace under the claim's name, reports where to reach it in status " +
				"and connection details (names only), and selects required objects labelled with the claim's name there.",
			req: req(legacy(claimRef), none(), nil),
			want: placed{Requirements: xfn.Requirements("auth", "team-a"), Objects: objectsIn("team-a", ""),
				Status: claimStatus("team-a"), Connection: claimConnection("team-a")},
		},
		"NoClaimNoNamespaceIsFatal": {
			reason: "A cluster-scoped composite without a claim has no namespace to render into.",
			req:    req(legacy(""), none(), nil),
			want: placed{Results: fatal(`cannot render XLegacyBindCluster auth-x7k2p: spec.namespace: cannot render a cluster-scoped XLegacyBindCluster ` +
				`without a claim: there is no namespace to render into. Create it through a BindClusterClaim (its objects land in the claim's namespace), or set spec.namespace`)},
		},
		"NoClaimSpecNamespace": {
			reason: "Without a claim, spec.namespace names the namespace; the cluster takes the composite's name.",
			req:    req(legacy(`"namespace": "dns",`), none(), nil),
			want: placed{Requirements: xfn.Requirements("auth-x7k2p", "dns"), Objects: func() []string {
				var out []string
				for _, o := range objectsIn("dns", "") {
					out = append(out, strings.ReplaceAll(strings.ReplaceAll(o, "/auth", "/auth-x7k2p"), "/xfr-tsig", "/xfr-tsig"))
				}
				sort.Strings(out)
				return out
			}(), Status: nil},
		},
		"ClaimCannotEscapeItsNamespace": {
			reason: "A claim's spec is copied into the composite: spec.namespace must not send its objects out of the claim's namespace.",
			req:    req(legacy(claimRef+`"namespace": "kube-system",`), none(), nil),
			want: placed{Results: fatal(`cannot render XLegacyBindCluster auth-x7k2p: spec.namespace: the objects of a claim land in the claim's namespace ` +
				`"team-a", not "kube-system": remove spec.namespace from BindClusterClaim team-a/auth`)},
		},
		"Wrapped": {
			reason: "With objectWrapping ProviderKubernetes every object is a provider-kubernetes Object named after the composite, the manifest in the claim's namespace.",
			req:    withInput(req(legacy(claimRef), none(), nil), wrapInput),
			want: placed{Requirements: xfn.Requirements("auth", "team-a"), Objects: objectsIn("team-a", "auth-x7k2p"),
				Status: claimStatus("team-a"), Connection: claimConnection("team-a")},
		},
		"WrappedNamespacedIsFatal": {
			reason: "A namespaced composite cannot compose cluster-scoped Objects.",
			req:    withInput(req(minimalXR, none(), nil), wrapInput),
			want: placed{Results: fatal(`cannot wrap the objects of XBindCluster dns/auth in provider-kubernetes Objects: Objects (kubernetes.crossplane.io/v1alpha2) ` +
				`are cluster scoped and a namespaced composite composes only namespaced resources. Use objectWrapping None (native objects) on Crossplane v2, ` +
				`or a cluster-scoped XLegacyBindCluster with a BindClusterClaim`)},
		},
		"UnknownInputFieldIsFatal": {
			reason: "The input is read strictly.",
			req:    withInput(req(legacy(claimRef), none(), nil), `{"apiVersion": "fn.bind.unkin.net/v1alpha1", "kind": "Input", "objectWraping": "None"}`),
			want: placed{Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL,
				Message: `cannot read the function input (fn.bind.unkin.net/v1alpha1, kind Input): json: unknown field "objectWraping"`}}},
		},
		"BadWrappingIsFatal": {
			reason: "objectWrapping is an enum.",
			req:    withInput(req(legacy(claimRef), none(), nil), `{"apiVersion": "fn.bind.unkin.net/v1alpha1", "kind": "Input", "objectWrapping": "Helm"}`),
			want: placed{Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL,
				Message: `input.objectWrapping: "Helm" is not one of None, ProviderKubernetes`}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): unexpected error %v", tc.reason, err)
			}
			got := place(rsp)
			if name == "NoClaimSpecNamespace" {
				got.Status, got.Connection = nil, nil // shape checked by ClaimNamespaceAndName
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform(), protocmp.IgnoreFields(&fnv1.Result{}, "reason", "target")); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWrappedReadiness: a wrapped object's readiness comes from the
// object provider-kubernetes observed (status.atProvider.manifest).
func TestWrappedReadiness(t *testing.T) {
	obj := func(inner string) *structpb.Struct {
		s := `{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"x"},"spec":{"forProvider":{"manifest":{}}}`
		if inner != "" {
			s += `,"status":{"atProvider":{"manifest":` + inner + `}}`
		}
		return resource.MustStructJSON(s + `}`)
	}
	sts := func(ready int) string {
		return `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"auth","namespace":"team-a"},"spec":{"replicas":2},"status":{"readyReplicas":` + itoa(ready) + `}}`
	}
	cases := map[string]struct {
		reason   string
		observed map[string]*structpb.Struct
		want     map[string]fnv1.Ready
	}{
		"NotObservedYet": {
			reason:   "An Object the provider has not observed yet (no atProvider.manifest) is not ready.",
			observed: map[string]*structpb.Struct{"service-auth": obj(""), "statefulset-auth": obj("")},
			want:     map[string]fnv1.Ready{"service-auth": fnv1.Ready_READY_FALSE, "statefulset-auth": fnv1.Ready_READY_FALSE},
		},
		"ObservedService": {
			reason:   "An observed Service exists: ready. A StatefulSet with 1 of 2 pods ready is not.",
			observed: map[string]*structpb.Struct{"service-auth": obj(`{"kind":"Service"}`), "statefulset-auth": obj(sts(1))},
			want:     map[string]fnv1.Ready{"service-auth": fnv1.Ready_READY_TRUE, "statefulset-auth": fnv1.Ready_READY_FALSE},
		},
		"StatefulSetReady": {
			reason:   "The wrapped StatefulSet's readyReplicas reach spec.replicas.",
			observed: map[string]*structpb.Struct{"statefulset-auth": obj(sts(2))},
			want:     map[string]fnv1.Ready{"service-auth": fnv1.Ready_READY_FALSE, "statefulset-auth": fnv1.Ready_READY_TRUE},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(),
				withInput(req(legacy(claimRef), none(), tc.observed), wrapInput))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]fnv1.Ready{}
			for n := range tc.want {
				got[n] = rsp.GetDesired().GetResources()[n].GetReady()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWrappedKeepsState: key material and serials are read back from the
// wrapped observed Objects (their spec.forProvider.manifest), so a second
// reconcile with another source of randomness changes nothing.
func TestWrappedKeepsState(t *testing.T) {
	first, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), withInput(req(legacy(claimRef), none(), nil), wrapInput))
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]*structpb.Struct{}
	want := map[string]*structpb.Struct{}
	for n, r := range first.GetDesired().GetResources() {
		// What the provider observes of a Secret may be redacted: state
		// must come from forProvider.
		o := r.GetResource().AsMap()
		m, _ := xfn.Unwrap(o)
		if m["kind"] == "Secret" {
			o["status"] = map[string]any{"atProvider": map[string]any{"manifest": map[string]any{"kind": "Secret", "data": map[string]any{"secret": "UkVEQUNURUQ="}}}}
		}
		s, err := structpb.NewStruct(o)
		if err != nil {
			t.Fatal(err)
		}
		observed[n] = s
		want[n] = r.GetResource()
	}
	if len(want) != 13 {
		t.Fatalf("rendered %d objects, want 13", len(want))
	}
	second, err := (&xfn.Function{}).RunFunction(context.Background(), withInput(req(legacy(claimRef), none(), observed), wrapInput))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*structpb.Struct{}
	for n, r := range second.GetDesired().GetResources() {
		got[n] = r.GetResource()
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("second reconcile changed the wrapped desired state: -first, +second:\n%s", diff)
	}
}

// TestExtraResources: Crossplane v1.x answers the requirements in the
// older extra_resources field; the selected records are used all the same.
func TestExtraResources(t *testing.T) {
	r := req(minimalXR, nil, nil)
	//lint:ignore SA1019 what Crossplane v1.x sends
	r.ExtraResources = map[string]*fnv1.Resources{
		xfn.RequiredZones:   {},
		xfn.RequiredRecords: {Items: []*fnv1.Resource{{Resource: resource.MustStructJSON(sprintf(requiredRecord, "dns"))}}},
	}
	rsp, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rsp.GetResults()) != 0 {
		t.Fatalf("results: %v", rsp.GetResults())
	}
	if len(rsp.GetDesired().GetResources()) == 0 {
		t.Fatal("nothing rendered: the function kept waiting for required resources Crossplane v1.x had answered as extra resources")
	}
	//lint:ignore SA1019 Crossplane v1.x reads it
	if rsp.GetRequirements().GetExtraResources()[xfn.RequiredRecords] == nil {
		t.Error("the requirements do not ask for extra resources: Crossplane v1.x would never send the records")
	}
}

// TestObjectName: Object names are the composite's plus the composition
// resource name, hashed when too long for an object name.
func TestObjectName(t *testing.T) {
	cases := map[string]struct {
		reason, xr, res, want string
	}{
		"Short": {"fits", "auth-x7k2p", "statefulset-auth", "auth-x7k2p-statefulset-auth"},
		"Long":  {"cut to 253 with a hash", strings.Repeat("a", 200), strings.Repeat("b", 100), strings.Repeat("a", 200) + "-" + strings.Repeat("b", 41) + "-HASH"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := xfn.ObjectName(tc.xr, tc.res)
			if strings.HasSuffix(tc.want, "-HASH") && len(got) == 253 {
				got = got[:len(got)-10] + "HASH"
			}
			if got != tc.want {
				t.Errorf("%s: ObjectName = %q (len %d), want %q", tc.reason, got, len(got), tc.want)
			}
		})
	}
}
