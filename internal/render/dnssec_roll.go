package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// zoneRoll is the outcome of a signed zone's rollovers for one render: the
// keys the policy's specs are matched against (kept), the successors made
// or kept for rollovers in progress, the stage each shipped key is
// rendered at, the old keys a finished rollover drops, and the record for
// the next render.
type zoneRoll struct {
	kept       []*dnssec.Key
	successors []*dnssec.Key
	stage      map[uint16]dnssec.Stage
	dropped    []*dnssec.Key
	started    []uint16 // successors made by this render
	record     []dnssec.Roll
	// pending are the rollovers to start once the policy's keys are known.
	pending []model.Rollover
}

// planRolls takes the last render's rollovers of zone z (prev) and the
// ones the zone asks for now, and sorts the kept keys: a rollover in
// progress keeps its successor aside (an unused key the policy's specs
// must not match) and its old key retiring; a finished one drops the old
// key. Each step a user cannot take is a located error:
//
//	label  done   last render          step
//	new    false  none, or done        start: make the successor
//	same   false  in progress          keep rolling
//	same   true   in progress          finish: drop the old key (and its DS)
//	same   true   done                 nothing (the successor is the key)
//	new    true   -                    error: never started
//	new    any    in progress          error: finish the other one first
//	same   false  done                 error: a finished rollover cannot resume
//	none   -      in progress          error: the rollover cannot be dropped
func planRolls(z *model.Zone, prev []dnssec.Roll, kept []*dnssec.Key) (zoneRoll, diag.Results) {
	var rs diag.Results
	zr := zoneRoll{stage: map[uint16]dnssec.Stage{}}
	byTag := map[uint16]*dnssec.Key{}
	for _, k := range kept {
		byTag[k.Tag()] = k
	}
	aside := map[uint16]bool{}
	want := map[string]model.Rollover{}
	for _, w := range z.Rollovers {
		want[w.Role] = w
	}
	last := map[string]dnssec.Roll{}
	for _, p := range prev {
		last[p.Role] = p
	}
	name := bare(z.Name)
	for _, role := range []string{dnssec.RoleKSK, dnssec.RoleZSK, dnssec.RoleCSK} {
		w, wok := want[role]
		p, pok := last[role]
		up := strings.ToUpper(role)
		switch {
		case !wok:
			if pok && !p.Done {
				rs.Errorf(z.Src, "spec.dnssecRollover", "cannot drop rollover %q of the %s of zone %q: it is in progress (key %d to %d), and named keeps rolling to a key the Secret would no longer hold; put spec.dnssecRollover.%s back with label %q, and set done when named reports its last step", p.Label, up, name, p.Old, p.New, role, p.Label)
				zr.record = append(zr.record, p)
			}
		case !pok || p.Label != w.Label:
			switch {
			case pok && !p.Done:
				rs.Errorf(z.Src, w.Field+".label", "cannot start rollover %q of the %s of zone %q: rollover %q (key %d to %d) is in progress; finish it first (label %q, done: true), then start the next", w.Label, up, name, p.Label, p.Old, p.New, p.Label)
				zr.record = append(zr.record, p)
				if k, ok := byTag[p.New]; ok {
					aside[p.New] = true
					zr.successors = append(zr.successors, k)
					zr.stage[p.New] = dnssec.Successor
					zr.stage[p.Old] = dnssec.Retiring
				}
			case w.Done:
				rs.Errorf(z.Src, w.Field+".done", "cannot finish rollover %q of the %s of zone %q: no render has started it; render it with done false (or unset) first, let named roll, then set done", w.Label, up, name)
			default:
				zr.pending = append(zr.pending, w)
			}
		default: // the same rollover
			newKey, hasNew := byTag[p.New]
			_, hasOld := byTag[p.Old]
			switch {
			case p.Done && !w.Done:
				rs.Errorf(z.Src, w.Field+".done", "cannot resume rollover %q of the %s of zone %q: it is done and key %d is gone; to roll again, give a new label", w.Label, up, name, p.Old)
				zr.record = append(zr.record, p)
			case p.Done:
				zr.record = append(zr.record, p)
			case !hasNew || !hasOld && !w.Done:
				missing := p.New
				if hasNew {
					missing = p.Old
				}
				rs.Errorf(z.Src, w.Field, "cannot continue rollover %q of the %s of zone %q: the DNSSEC key Secret lost key %d (rolling %d to %d); restore the Secret from your backup", w.Label, up, name, missing, p.Old, p.New)
				zr.record = append(zr.record, p)
			case w.Done:
				if hasOld {
					aside[p.Old] = true
					zr.dropped = append(zr.dropped, byTag[p.Old])
				}
				p.Done = true
				zr.record = append(zr.record, p)
			default:
				aside[p.New] = true
				zr.successors = append(zr.successors, newKey)
				zr.stage[p.New] = dnssec.Successor
				zr.stage[p.Old] = dnssec.Retiring
				zr.record = append(zr.record, p)
			}
		}
	}
	for _, k := range kept {
		if !aside[k.Tag()] {
			zr.kept = append(zr.kept, k)
		}
	}
	return zr, rs
}

// startRolls makes the successor of each rollover a render starts, once
// the zone's keys are matched: a key of the role's spec from r, with a
// tag no key of the zone has.
func (zr *zoneRoll) startRolls(z *model.Zone, specs []dnssec.Spec, keys []*dnssec.Key, r io.Reader, imported bool) diag.Results {
	var rs diag.Results
	tags := map[uint16]bool{}
	for _, k := range slices.Concat(keys, zr.successors, zr.dropped) {
		tags[k.Tag()] = true
	}
	for _, w := range zr.pending {
		up := strings.ToUpper(w.Role)
		if imported || r == nil {
			rs.Errorf(z.Src, w.Field, "cannot start rollover %q of the %s of zone %q: the cluster's DNSSEC keys are made elsewhere (spec.dnssec), so the render cannot make the successor; add it to that Secret and to spec.dnssec.publicKeys, or let the render own the keys", w.Label, up, bare(z.Name))
			continue
		}
		var spec dnssec.Spec
		var old *dnssec.Key
		for _, s := range specs {
			if s.Role != w.Role {
				continue
			}
			spec = s
			for _, k := range keys {
				if k.Role == w.Role && k.DNSKEY.Algorithm == s.Algorithm {
					old = k
				}
			}
		}
		if old == nil {
			rs.Errorf(z.Src, w.Field, "cannot start rollover %q of the %s of zone %q: the zone has no %s to roll", w.Label, up, bare(z.Name), up)
			continue
		}
		var succ *dnssec.Key
		for try := 0; try < 16 && succ == nil; try++ {
			k, err := dnssec.Generate(r, z.Name, spec)
			if err != nil {
				rs.Errorf(z.Src, w.Field, "cannot make the successor of the %s of zone %q: %v", up, bare(z.Name), err)
				break
			}
			if !tags[k.Tag()] {
				succ = k
			}
		}
		if succ == nil {
			continue
		}
		tags[succ.Tag()] = true
		zr.successors = append(zr.successors, succ)
		zr.started = append(zr.started, succ.Tag())
		zr.stage[succ.Tag()] = dnssec.Successor
		zr.stage[old.Tag()] = dnssec.Retiring
		zr.record = append(zr.record, dnssec.Roll{Role: w.Role, Label: w.Label, Old: old.Tag(), New: succ.Tag()})
	}
	slices.SortFunc(zr.record, func(a, b dnssec.Roll) int { return strings.Compare(roleOrder(a.Role), roleOrder(b.Role)) })
	return rs
}

func roleOrder(role string) string {
	return fmt.Sprint(slices.Index([]string{dnssec.RoleKSK, dnssec.RoleZSK, dnssec.RoleCSK}, role))
}

// rollResults are the steps of a zone's rollovers that need a human, as
// results: the DS lines to publish or remove at a parent outside the
// cluster (one in the cluster gets them from the render), and when to set
// done.
func rollResults(z *model.Zone, zr zoneRoll, keys []*dnssec.Key, parent *model.Zone) diag.Results {
	var rs diag.Results
	byTag := map[uint16]*dnssec.Key{}
	for _, k := range slices.Concat(keys, zr.successors, zr.dropped) {
		byTag[k.Tag()] = k
	}
	name := bare(z.Name)
	for _, r := range zr.record {
		up := strings.ToUpper(r.Role)
		f := "spec.dnssecRollover." + r.Role
		sep := r.Role != dnssec.RoleZSK
		old, succ := byTag[r.Old], byTag[r.New]
		switch {
		case r.Done && slices.ContainsFunc(zr.dropped, func(k *dnssec.Key) bool { return k.Tag() == r.Old }):
			msg := fmt.Sprintf("rollover %q of the %s of zone %q is done: key %d leaves the DNSSEC key Secret", r.Label, up, name, r.Old)
			if sep && old != nil {
				if parent != nil {
					msg += fmt.Sprintf("; the render removes its DS from parent zone %q: %s", bare(parent.Name), dsLines(old))
				} else {
					msg += fmt.Sprintf("; remove its DS from the parent now (named waits for it to go): %s", dsLines(old))
				}
			}
			rs = append(rs, diag.Result{Severity: diag.Info, Source: z.Src, Field: f + ".done", Message: msg})
		case !r.Done && succ != nil:
			msg := fmt.Sprintf("rollover %q of the %s of zone %q: named rolls key %d to key %d (rendered in the DNSSEC key Secret)", r.Label, up, name, r.Old, r.New)
			if sep {
				if parent != nil {
					msg += fmt.Sprintf("; the render writes the new DS into parent zone %q beside the old one: %s", bare(parent.Name), dsLines(succ))
				} else {
					msg += fmt.Sprintf("; publish the new DS at the parent now, beside the old one (keep the old DS): %s", dsLines(succ))
				}
				msg += fmt.Sprintf("; when `rndc dnssec -status %s` shows key %d with \"ds: omnipresent\"", name, r.New)
				if r.Role == dnssec.RoleCSK {
					msg += " and \"zone rrsig: omnipresent\""
				}
			} else {
				msg += fmt.Sprintf("; when `rndc dnssec -status %s` shows key %d with \"zone rrsig: omnipresent\"", name, r.New)
			}
			msg += fmt.Sprintf(", set %s.done: true", f)
			rs = append(rs, diag.Result{Severity: diag.Info, Source: z.Src, Field: f, Message: msg})
		}
	}
	return rs
}

// dsLines are a key's SHA-256 DS record as one line for messages.
func dsLines(k *dnssec.Key) string {
	d := k.DS()
	return fmt.Sprintf("%s %d IN DS %d %d %d %s", d.Hdr.Name, d.Hdr.Ttl, d.KeyTag, d.Algorithm, d.DigestType, strings.ToUpper(d.Digest))
}
