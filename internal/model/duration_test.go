package model

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// TestParseDuration pins BIND 9.18's duration rules (lib/isccfg/duration.c,
// checked with named-checkconf 9.18.49 on dnskey-ttl): what it refuses we
// refuse, and the few forms it reads that we refuse are documented.
func TestParseDuration(t *testing.T) {
	cases := map[string]struct {
		reason    string
		in        string
		unlimited bool
		want      Duration
		wantErr   bool
	}{
		"hour":           {reason: "PT1H is one hour", in: "PT1H", want: Duration{Text: "PT1H", Seconds: 3600}},
		"lower case":     {reason: "BIND reads either case; rendered upper", in: "p1d", want: Duration{Text: "P1D", Seconds: 86400}},
		"weeks alone":    {reason: "PnW alone is ISO 8601 and BIND reads it", in: "P2W", want: Duration{Text: "P2W", Seconds: 14 * 86400}},
		"all units":      {reason: "a year is 365 days, a month 31 in BIND", in: "P1Y2M3DT4H5M6S", want: Duration{Text: "P1Y2M3DT4H5M6S", Seconds: 365*86400 + 2*31*86400 + 3*86400 + 4*3600 + 5*60 + 6}},
		"minutes":        {reason: "M after T is minutes", in: "PT30M", want: Duration{Text: "PT30M", Seconds: 1800}},
		"months":         {reason: "M before T is months", in: "P1M", want: Duration{Text: "P1M", Seconds: 31 * 86400}},
		"unlimited":      {reason: "a key lifetime may be unlimited", in: "unlimited", unlimited: true, want: Duration{Text: "unlimited", Unlimited: true}},
		"capped":         {reason: "BIND caps a duration at 2^32-1 seconds", in: "P4294967295Y", want: Duration{Text: "P4294967295Y", Seconds: 4294967295}},
		"P1H":            {reason: "named-checkconf refuses an hour without T", in: "P1H", wantErr: true},
		"PT5D":           {reason: "named-checkconf refuses days after T", in: "PT5D", wantErr: true},
		"weeks mixed":    {reason: "named-checkconf refuses weeks mixed with days", in: "P1W2D", wantErr: true},
		"out of order":   {reason: "named-checkconf refuses PT1H1D", in: "PT1H1D", wantErr: true},
		"unlimited here": {reason: "only key lifetimes take unlimited", in: "unlimited", wantErr: true},
		"empty P":        {reason: "documented: BIND reads P as 0, we refuse it", in: "P", wantErr: true},
		"empty T":        {reason: "documented: BIND ignores a trailing T, we refuse it", in: "P1DT", wantErr: true},
		"ttl style":      {reason: "documented: BIND 9.18 also reads 1d, the API says ISO 8601", in: "1d", wantErr: true},
		"too big":        {reason: "a unit above 2^32-1 is refused by BIND", in: "P4294967296D", wantErr: true},
		"negative":       {reason: "no sign in ISO 8601 durations", in: "P-1D", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDuration(tc.in, tc.unlimited)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: ParseDuration(%q) error %v, want error %v", tc.reason, tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: ParseDuration(%q) (-want +got):\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}

func TestPolicyDurationFields(t *testing.T) {
	// Every duration of the vocabulary has its string field in the API,
	// and every duration field of the API is in the vocabulary.
	var sp v1alpha1.BindDNSSECPolicySpec
	seen := map[*string]string{}
	for _, d := range vocab.PolicyDurations {
		f := PolicyDurationField(&sp, d)
		if prev, dup := seen[f]; dup {
			t.Errorf("%s and %s share one field", prev, d.Keyword)
		}
		seen[f] = d.Keyword
	}
	v := reflect.ValueOf(&sp).Elem()
	for i := range v.NumField() {
		if v.Field(i).Kind() != reflect.String {
			continue
		}
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if _, ok := seen[v.Field(i).Addr().Interface().(*string)]; !ok && name != "clusterRef" && name != "policyName" && name != "checkDS" {
			t.Errorf("BindDNSSECPolicySpec.%s is a string that vocab.PolicyDurations does not list", name)
		}
	}
}
