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

const minimalXR = `{
  "apiVersion": "xbind.unkin.net/v1alpha1", "kind": "XBindCluster",
  "metadata": {"name": "auth", "namespace": "dns"},
  "spec": {
    "crossplane": {"compositionRef": {"name": "x"}},
    "replicas": 2,
    "keys": [{"name": "xfr", "spec": {}}],
    "zones": [{"name": "example-com", "spec": {"zoneName": "example.com", "nameservers": ["ns1.example.com."],
      "records": [{"name": "ns1", "type": "A", "values": ["192.0.2.1"]}]}}]
  }
}`

const badXR = `{
  "apiVersion": "xbind.unkin.net/v1alpha1", "kind": "XBindCluster",
  "metadata": {"name": "auth", "namespace": "dns"},
  "spec": {
    "zones": [
      {"name": "ok", "spec": {"zoneName": "ok.example", "nameservers": ["ns1.elsewhere.example."]}},
      {"name": "bad", "spec": {"zoneName": "example.com", "nameservers": ["ns1.elsewhere.example."],
        "records": [{"name": "www", "type": "A", "values": ["192.0.2.1"], "colour": "red"}]}}
    ]
  }
}`

const requiredRecord = `{
  "apiVersion": "bind.unkin.net/v1alpha1", "kind": "DNSRecord",
  "metadata": {"name": "www", "namespace": "%s", "labels": {"bind.unkin.net/cluster": "auth"}},
  "spec": {"zoneRef": "example-com", "name": "www", "type": "A", "values": ["192.0.2.80"]}
}`

func req(xr string, required map[string][]string, observed map[string]*structpb.Struct) *fnv1.RunFunctionRequest {
	r := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "t"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(xr)}},
	}
	if required != nil {
		r.RequiredResources = map[string]*fnv1.Resources{}
		for n, objs := range required {
			rs := &fnv1.Resources{}
			for _, o := range objs {
				rs.Items = append(rs.Items, &fnv1.Resource{Resource: resource.MustStructJSON(o)})
			}
			r.RequiredResources[n] = rs
		}
	}
	if observed != nil {
		r.Observed.Resources = map[string]*fnv1.Resource{}
		for n, s := range observed {
			r.Observed.Resources[n] = &fnv1.Resource{Resource: s}
		}
	}
	return r
}

func none() map[string][]string {
	return map[string][]string{xfn.RequiredZones: nil, xfn.RequiredRecords: nil}
}

// summary is what the table compares: results, requirements and each
// desired composed resource's readiness.
type summary struct {
	Results      []*fnv1.Result
	Requirements *fnv1.Requirements
	Ready        map[string]fnv1.Ready
	Status       map[string]any
}

func summarize(rsp *fnv1.RunFunctionResponse) summary {
	s := summary{Results: rsp.GetResults(), Requirements: rsp.GetRequirements()}
	for n, r := range rsp.GetDesired().GetResources() {
		if s.Ready == nil {
			s.Ready = map[string]fnv1.Ready{}
		}
		s.Ready[n] = r.GetReady()
	}
	if st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; st != nil {
		s.Status = st.GetStructValue().AsMap()
	}
	return s
}

func fatal(msg string) []*fnv1.Result {
	return []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: msg, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}}
}

func TestRunFunction(t *testing.T) {
	allUnready := map[string]fnv1.Ready{}
	for _, n := range []string{"configmap-auth-config", "configmap-auth-zones-0", "poddisruptionbudget-auth", "secret-auth-keys",
		"secret-auth-xfr-tsig", "secret-xfr-tsig", "service-auth", "service-auth-headless", "service-auth-primary", "statefulset-auth",
		"serviceaccount-auth-agent", "role-auth-agent", "rolebinding-auth-agent"} {
		allUnready[n] = fnv1.Ready_READY_FALSE
	}
	withReady := func(m map[string]fnv1.Ready, names ...string) map[string]fnv1.Ready {
		out := map[string]fnv1.Ready{}
		for k, v := range m {
			out[k] = v
		}
		for _, n := range names {
			out[n] = fnv1.Ready_READY_TRUE
		}
		return out
	}
	rendered := []*fnv1.Result(nil)
	status := func(ready int) map[string]any {
		return map[string]any{"bind": map[string]any{
			"namespace": "dns", "serveService": "auth", "serveAddress": "auth.dns.svc", "primaryService": "auth-primary", "headlessService": "auth-headless", "configMap": "auth-config",
			"composedObjects": float64(13), "readyObjects": float64(ready), "tsigSecrets": []any{"auth-xfr-tsig", "xfr-tsig"}, "zoneConfigMaps": []any{"auth-zones-0"},
		}}
	}
	sts := func(replicas, ready int) *structpb.Struct {
		return resource.MustStructJSON(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"auth","namespace":"dns"},` +
			`"spec":{"replicas":` + itoa(replicas) + `},"status":{"readyReplicas":` + itoa(ready) + `}}`)
	}
	svc := resource.MustStructJSON(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"auth","namespace":"dns"}}`)

	cases := map[string]struct {
		reason string
		fn     *xfn.Function
		req    *fnv1.RunFunctionRequest
		want   summary
	}{
		"WaitsForRequiredResources": {
			reason: "Before Crossplane answers the requirements the function asks and renders nothing: a desired state now would lack the selected zones.",
			req:    req(minimalXR, nil, nil),
			want:   summary{Requirements: xfn.Requirements("auth", "dns")},
		},
		"Renders": {
			reason: "A valid XR renders every object, none ready before it is observed, with the XR's status filled in.",
			req:    req(minimalXR, none(), nil),
			want:   summary{Results: rendered, Requirements: xfn.Requirements("auth", "dns"), Ready: allUnready, Status: status(0)},
		},
		"ReadinessFromObserved": {
			reason: "An observed object is ready; the StatefulSet only once all its replicas are.",
			req:    req(minimalXR, none(), map[string]*structpb.Struct{"service-auth": svc, "statefulset-auth": sts(2, 1)}),
			want:   summary{Results: rendered, Requirements: xfn.Requirements("auth", "dns"), Ready: withReady(allUnready, "service-auth"), Status: status(1)},
		},
		"StatefulSetReady": {
			reason: "A StatefulSet whose ready replicas reach spec.replicas is ready.",
			req:    req(minimalXR, none(), map[string]*structpb.Struct{"statefulset-auth": sts(2, 2)}),
			want:   summary{Results: rendered, Requirements: xfn.Requirements("auth", "dns"), Ready: withReady(allUnready, "statefulset-auth"), Status: status(1)},
		},
		"InvalidSpecIsFatal": {
			reason: "A validation error is one Fatal result naming the field path inside the XR, and no desired state at all.",
			req:    req(badXR, none(), nil),
			want: summary{
				Requirements: xfn.Requirements("auth", "dns"),
				Results: fatal(`cannot render XBindCluster dns/auth: spec.zones[1].spec.records[0].colour: unknown field "colour": ` +
					`remove it or check its spelling against the BindZone schema`),
			},
		},
		"ClusterRefMustBeTheXR": {
			reason: "An inline entry cannot belong to another cluster.",
			req: req(strings.Replace(minimalXR, `"keys": [{"name": "xfr", "spec": {}}]`, `"keys": [{"name": "xfr", "spec": {"clusterRef": "other"}}]`, 1),
				none(), nil),
			want: summary{
				Requirements: xfn.Requirements("auth", "dns"),
				Results: fatal(`cannot render XBindCluster dns/auth: spec.keys[0].spec.clusterRef: clusterRef "other" names another cluster: ` +
					`an inline BindTSIGKey belongs to this XBindCluster ("auth"); leave clusterRef empty`),
			},
		},
		"RequiredRecordInOtherNamespaceIgnored": {
			reason: "crossplane render ignores the selector's namespace, so the function filters: a record elsewhere does not reach the cluster.",
			req:    req(minimalXR, map[string][]string{xfn.RequiredZones: nil, xfn.RequiredRecords: {sprintf(requiredRecord, "other")}}, nil),
			want:   summary{Results: rendered, Requirements: xfn.Requirements("auth", "dns"), Ready: allUnready, Status: status(0)},
		},
		"RequiredRecordBrokenIsLocated": {
			reason: "An error in a required object names that object, not the XR.",
			req: req(minimalXR, map[string][]string{xfn.RequiredZones: nil, xfn.RequiredRecords: {
				strings.Replace(sprintf(requiredRecord, "dns"), `"zoneRef": "example-com"`, `"zoneRef": "nope"`, 1)}}, nil),
			want: summary{
				Requirements: xfn.Requirements("auth", "dns"),
				Results:      fatal(`cannot render XBindCluster dns/auth: DNSRecord dns/www spec.zoneRef: ` + zoneRefMessage(t)),
			},
		},
		"ResponseTooLarge": {
			reason: "A desired state over the response limit is a clear Fatal, not a gRPC error in Crossplane.",
			fn:     &xfn.Function{Rand: &testutil.DetRand{}, MaxResponseBytes: 1000},
			req:    req(minimalXR, none(), nil),
			want: summary{
				Requirements: xfn.Requirements("auth", "dns"),
				Results:      fatal("SIZE"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := tc.fn
			if f == nil {
				f = &xfn.Function{Rand: &testutil.DetRand{}}
			}
			rsp, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): unexpected error %v", tc.reason, err)
			}
			got := summarize(rsp)
			// The size message carries byte counts; check its shape only.
			if len(tc.want.Results) == 1 && tc.want.Results[0].GetMessage() == "SIZE" && len(got.Results) == 1 &&
				strings.Contains(got.Results[0].GetMessage(), "over the 0.00 MiB (1000 bytes) a Crossplane function may return") {
				got.Results[0].Message = "SIZE"
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform(), protocmp.IgnoreFields(&fnv1.Result{}, "reason")); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// zoneRefMessage is whatever the model says about an unknown zone: this
// test is about where the message points, not its words.
func zoneRefMessage(t *testing.T) string {
	t.Helper()
	rsp, _ := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), req(minimalXR,
		map[string][]string{xfn.RequiredZones: nil, xfn.RequiredRecords: {strings.Replace(sprintf(requiredRecord, "dns"), `"zoneRef": "example-com"`, `"zoneRef": "nope"`, 1)}}, nil))
	for _, r := range rsp.GetResults() {
		if i := strings.Index(r.GetMessage(), "spec.zoneRef: "); i >= 0 {
			return r.GetMessage()[i+len("spec.zoneRef: "):]
		}
	}
	t.Fatal("no result about spec.zoneRef")
	return ""
}

// TestKeepsStateAcrossReconciles: the desired state of a second call fed
// the first call's composed resources as observed is identical (same key
// material, same serials), even with a different source of randomness.
func TestKeepsStateAcrossReconciles(t *testing.T) {
	first, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), req(minimalXR, none(), nil))
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]*structpb.Struct{}
	for n, r := range first.GetDesired().GetResources() {
		observed[n] = r.GetResource()
	}
	second, err := (&xfn.Function{}).RunFunction(context.Background(), req(minimalXR, none(), observed))
	if err != nil {
		t.Fatal(err)
	}
	want, got := map[string]*structpb.Struct{}, map[string]*structpb.Struct{}
	for n, r := range first.GetDesired().GetResources() {
		want[n] = r.GetResource()
	}
	for n, r := range second.GetDesired().GetResources() {
		got[n] = r.GetResource()
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("second reconcile changed the desired state: -first, +second:\n%s", diff)
	}
	if len(want) == 0 {
		t.Fatal("nothing rendered")
	}
}

func TestWarningsAreLocated(t *testing.T) {
	xr := strings.Replace(minimalXR, `"zones": [`, `"zones": [{"name": "fwd", "spec": {"zoneName": "consul", "type": "forward", "forwarders": ["192.0.2.9"]}}, `, 1)
	rsp, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), req(xr, none(), nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rsp.GetResults() {
		got = append(got, r.GetSeverity().String()+" "+strings.SplitN(r.GetMessage(), ":", 2)[0])
	}
	sort.Strings(got)
	want := []string{"SEVERITY_WARNING spec.zones[0].spec.type"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warning results: -want, +got:\n%s", diff)
	}
	if len(rsp.GetDesired().GetResources()) == 0 {
		t.Error("a warning must not stop the render")
	}
}

func itoa(i int) string { return sprintf("%d", i) }
