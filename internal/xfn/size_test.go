package xfn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// bigXR is an XBindCluster with one zone of n inline A records (host<i>,
// one address each): the shape of a large flat zone.
func bigXR(n int) string {
	var recs []string
	for i := range n {
		recs = append(recs, fmt.Sprintf(`{"name":"host%d","type":"A","values":["10.%d.%d.%d"]}`, i, i>>16&255, i>>8&255, i&255))
	}
	return `{"apiVersion":"xbind.unkin.net/v1alpha1","kind":"XBindCluster","metadata":{"name":"auth","namespace":"dns"},` +
		`"spec":{"replicas":3,"zones":[{"name":"big","spec":{"zoneName":"big.example","nameservers":["ns1.example.com."],` +
		`"records":[` + strings.Join(recs, ",") + `]}}]}}`
}

// sizes is one measurement: the XR as stored (JSON), and the steady-state
// request (observed composed resources = the previous desired state) and
// response of a reconcile.
type sizes struct{ xr, request, response int }

func measure(t *testing.T, n int) (sizes, *fnv1.RunFunctionResponse) {
	t.Helper()
	xr := bigXR(n)
	f := &xfn.Function{Rand: &testutil.DetRand{}, MaxResponseBytes: 1 << 30}
	first, err := f.RunFunction(context.Background(), req(xr, none(), nil))
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]*structpb.Struct{}
	for name, r := range first.GetDesired().GetResources() {
		observed[name] = r.GetResource()
	}
	steady := req(xr, none(), observed)
	second, err := f.RunFunction(context.Background(), steady)
	if err != nil {
		t.Fatal(err)
	}
	var compact map[string]any
	if err := json.Unmarshal([]byte(xr), &compact); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(compact)
	return sizes{xr: len(js), request: proto.Size(steady), response: proto.Size(second)}, second
}

// The numbers docs/crossplane.md quotes: an XR of 27,000 single-address
// records is just under the API server's 1.5 MiB object limit and its
// steady-state request and response fit gRPC's 4 MiB default; at 38,000 the
// request is over 4 MiB (function-bind accepts 16 MiB). A response over the
// limit is a Fatal result.
func TestSizeLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the size measurement renders ~65,000 records")
	}
	const etcdLimit, grpcDefault = 3 << 19, 4 << 20 // 1.5 MiB, 4 MiB
	cases := map[string]struct {
		reason  string
		n       int
		xrFits  bool
		reqFits bool
	}{
		"LargestStorableXR": {"27,000 records: the XR fits the API server, request and response fit 4 MiB", 27000, true, true},
		"RequestOver4MiB":   {"38,000 records: too big to store, and the request is over 4 MiB", 38000, false, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, rsp := measure(t, tc.n)
			t.Logf("records=%d xr=%d request=%d response=%d", tc.n, s.xr, s.request, s.response)
			if got := s.xr <= etcdLimit; got != tc.xrFits {
				t.Errorf("%s: XR of %d bytes fits 1.5 MiB = %v, want %v", tc.reason, s.xr, got, tc.xrFits)
			}
			if got := s.request <= grpcDefault; got != tc.reqFits {
				t.Errorf("%s: request of %d bytes fits 4 MiB = %v, want %v", tc.reason, s.request, got, tc.reqFits)
			}
			if s.response > grpcDefault {
				t.Errorf("%s: response of %d bytes is over 4 MiB", tc.reason, s.response)
			}
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					t.Errorf("%s: unexpected Fatal: %s", tc.reason, r.GetMessage())
				}
			}
		})
	}
	t.Run("ResponseOverLimitIsFatal", func(t *testing.T) {
		f := &xfn.Function{Rand: &testutil.DetRand{}, MaxResponseBytes: 1 << 20}
		rsp, err := f.RunFunction(context.Background(), req(bigXR(27000), none(), nil))
		if err != nil {
			t.Fatal(err)
		}
		rs := rsp.GetResults()
		if len(rs) != 1 || rs[0].GetSeverity() != fnv1.Severity_SEVERITY_FATAL ||
			!strings.Contains(rs[0].GetMessage(), "over the 1.00 MiB (1048576 bytes) a Crossplane function may return") ||
			len(rsp.GetDesired().GetResources()) != 0 {
			t.Errorf("want one Fatal about the response size and no desired state, got %v", rs)
		}
	})
}
