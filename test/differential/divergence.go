package differential

import (
	"regexp"
	"strings"
)

// Kinds of divergence.
const (
	AcceptedRefused = "accepted-but-BIND-refuses"
	RefusedLoads    = "refused-but-BIND-loads"
)

// Documented are generator mistakes that fn-validate refuses although BIND
// would load them, each with the docs/validation.md row that says so.
var Documented = map[string]string{
	"undefined-key":        "references: `key <name>` names a defined BindTSIGKey (named-checkconf does not catch it)",
	"records-on-secondary": "DNS data: records on a secondary, stub or forward zone",
	"owner-outside-zone":   "DNS data: owners inside the zone",
}

// documentedMessages are fn-validate errors for refusals docs/validation.md
// lists although BIND would load the input (the row in the comment).
var documentedMessages = []*regexp.Regexp{
	regexp.MustCompile(`has that keyName, so BIND would never match it`),      // references: key <name> names a defined BindTSIGKey
	regexp.MustCompile(`cannot share transfer key .* between views`),          // replication: two views with one transfer key
	regexp.MustCompile(`cannot add records to (secondary|stub|forward) zone`), // DNS data: records on a secondary, stub or forward zone
	regexp.MustCompile(`an apex NS RRset cannot be set here`),                 // apex NS
	// Refused on purpose (docs/validation.md, "Deliberate differences"):
	regexp.MustCompile(`cannot use key .* to update zones of two views`),                                     // an update key shared by two views' dynamic zones
	regexp.MustCompile(`cannot use key .* to update zone .* of view .*: the key selects view`),               // an update key that selects another view
	regexp.MustCompile(`cannot sign zone .* in view .* too`),                                                 // one zone name signed in two views
	regexp.MustCompile(`cannot use DNSSEC algorithm "(?i:rsasha1|nsec3rsasha1|rsamd5|dsa|nsec3dsa|[1357])"`), // SHA-1 and older algorithms
	regexp.MustCompile(`cannot generate a .* key: Go has no`),                                                // Ed448 keys to generate
	regexp.MustCompile(`NSEC3 iterations: BIND 9.20 refuses any value but 0`),                                // NSEC3 iterations other than 0 (9.18 loads them)
	regexp.MustCompile(`names starting "bind-fn-" are bind-fn's own`),                                        // ACL and key names starting bind-fn-
	// One name space per view: two BindZones of one name in any case. BIND
	// refuses a zone defined twice, but the bypass render builds one zone
	// statement of the two, so it cannot ask.
	regexp.MustCompile(`zone .* is already defined by BindZone .*: one BindZone per zone and view`),
}

// Divergence is one disagreement between fn-validate and BIND.
type Divergence struct {
	Kind   string
	Stage  string // BIND's stage (accepted-but-refused) or "fn-validate"
	Detail string // BIND's error, or fn-validate's
}

// Classify compares the verdicts. mistakes are the generator's injected
// mistakes (none: the package is meant to be valid).
func Classify(mistakes []string, v Verdict) *Divergence {
	if v.Accepted {
		if len(v.BIND) == 0 {
			return nil
		}
		f := v.BIND[0]
		return &Divergence{Kind: AcceptedRefused, Stage: f.Stage, Detail: f.String()}
	}
	if !v.Rendered || len(v.BIND) > 0 {
		return nil // BIND refuses too, or cannot be asked
	}
	for _, m := range mistakes {
		if _, ok := Documented[m]; ok {
			return nil
		}
	}
	documented := len(v.Errors) > 0
	for _, e := range v.Errors {
		ok := false
		for _, re := range documentedMessages {
			ok = ok || re.MatchString(e)
		}
		documented = documented && ok
	}
	if documented {
		return nil
	}
	d := &Divergence{Kind: RefusedLoads, Stage: "fn-validate"}
	if len(v.Errors) > 0 {
		d.Detail = v.Errors[0]
	}
	return d
}

var (
	normQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`)
	normRef    = regexp.MustCompile(`bind\.unkin\.net/v1alpha1/(\w+)/\S+`)
	normPath   = regexp.MustCompile(`/[^\s:]+`)
	normNum    = regexp.MustCompile(`\d+`)
	normIdx    = regexp.MustCompile(`\[N\]`)
	normZone   = regexp.MustCompile(`zone \S+?/IN(/\S+?)?( \(\w+\))?:`)
	normZone2  = regexp.MustCompile(`\S+/IN:`)
	normObj    = regexp.MustCompile(`\b(Bind\w+|DNSRecord) [a-z0-9.-]+/[a-z0-9.-]+`)
	normName   = regexp.MustCompile(` [^\s/:]*\.[^\s:]*:`)
	normZone3  = regexp.MustCompile(`zone \S+ with policy \S+`)
	normSrc    = regexp.MustCompile(` \(pkg\.yaml[^)]*\)| \(input\.yaml[^)]*\)`)
	keyLine    = regexp.MustCompile(`(?i)error|fail|unknown|bad |illegal|exceed|loop|invalid|expected|not |cannot|must|out of range|too long|refused|extra input|requires|redefine|duplicate|already|in use|never got`)
	// warnLine: BIND's warnings, which never make it refuse
	warnLine = regexp.MustCompile(`loaded serial|default changed|found type SPF|is deprecated|will be removed`)
)

// Signature groups divergences that are one defect: the kind, the stage and
// the telling line of the message with names, numbers and paths blanked.
func (d Divergence) Signature() string {
	line := ""
	for _, l := range strings.Split(d.Detail, "\n") {
		if keyLine.MatchString(l) && !warnLine.MatchString(l) {
			line = l
			break
		}
	}
	if line == "" {
		line, _, _ = strings.Cut(d.Detail, "\n")
	}
	if d.Kind == AcceptedRefused {
		// "stage cluster where: msg": the cluster and zone are names.
		if _, rest, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(line, d.Stage) {
			line = rest
		}
	}
	// zone names in BIND's "zone x/IN/view" and "view/x/IN:"
	s := normZone.ReplaceAllString(line, "zone Z")
	s = normZone2.ReplaceAllString(s, "Z:")
	s = normSrc.ReplaceAllString(s, "")
	s = normRef.ReplaceAllString(s, "$1")
	s = normObj.ReplaceAllString(s, "$1")
	s = normQuoted.ReplaceAllString(s, "Q")
	s = normPath.ReplaceAllString(s, "P")
	s = normNum.ReplaceAllString(s, "N")
	s = normIdx.ReplaceAllString(s, "")
	if d.Kind == AcceptedRefused {
		// BIND's messages name owners and zones
		s = normName.ReplaceAllString(s, " NAME:")
		s = normZone3.ReplaceAllString(s, "zone Z with policy Q")
	}
	return d.Kind + " | " + d.Stage + " | " + strings.Join(strings.Fields(s), " ")
}
