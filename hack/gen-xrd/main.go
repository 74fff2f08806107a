// Command gen-xrd writes the XBindCluster CompositeResourceDefinition from
// the CRDs controller-gen generates from api/ (config/crd): the cluster's
// spec schema at spec level, and each other kind's spec schema as the
// items of an inline list. The XRD is generated, never edited by hand; a
// test regenerates it and fails on drift.
//
// Two XRDs come from the one schema source: the Crossplane v2 namespaced
// XBindCluster (apiextensions v2) and the legacy cluster-scoped
// XLegacyBindCluster with its claim BindClusterClaim (apiextensions v1: on
// Crossplane v1.x, and on v2 with scope LegacyCluster).
//
//	go run ./hack/gen-xrd              # writes every Targets file
//	go run ./hack/gen-xrd -check       # fails when they are stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// Config selects which XRD to write. The defaults are the Crossplane v2
// namespaced XRD; a legacy cluster-scoped one (apiextensions v1, with a
// claim) is the same schema with other names.
type Config struct {
	CRDDir string
	// XRDAPIVersion: apiextensions.crossplane.io/v2 or /v1.
	XRDAPIVersion string
	// Scope: Namespaced (v2), or "" for a v1 XRD (cluster scoped).
	Scope                  string
	Group, Version         string
	Kind, Plural           string
	ClaimKind, ClaimPlural string
	// ConnectionSecretKeys of a legacy XRD: the keys the function publishes
	// as connection details (to the claim's connection Secret).
	ConnectionSecretKeys []string
}

// Cluster is true for a legacy (cluster-scoped) composite.
func (c Config) Cluster() bool {
	return c.Scope == "" || c.Scope == "LegacyCluster" || c.Scope == "Cluster"
}

// DefaultConfig is the v2 namespaced XBindCluster.
func DefaultConfig(crdDir string) Config {
	return Config{
		CRDDir:        crdDir,
		XRDAPIVersion: "apiextensions.crossplane.io/v2",
		Scope:         "Namespaced",
		Group:         xfn.Group,
		Version:       xfn.Version,
		Kind:          xfn.Kind,
		Plural:        xfn.Plural,
	}
}

// LegacyConfig is the cluster-scoped XLegacyBindCluster with the claim
// BindClusterClaim. The XRD has no scope field: Crossplane v1.x knows none
// (a strict apply would reject it) and v2 defaults a v1 XRD to
// LegacyCluster.
func LegacyConfig(crdDir string) Config {
	return Config{
		CRDDir:               crdDir,
		XRDAPIVersion:        "apiextensions.crossplane.io/v1",
		Group:                xfn.Group,
		Version:              xfn.Version,
		Kind:                 xfn.LegacyKind,
		Plural:               xfn.LegacyPlural,
		ClaimKind:            xfn.ClaimKind,
		ClaimPlural:          xfn.ClaimPlural,
		ConnectionSecretKeys: xfn.ConnectionKeys,
	}
}

// maxItems bounds each inline list: the API server estimates the cost of
// CEL rules inside lists from their bounds, and an XR must fit one object.
var maxItems = map[string]int{
	"acls": 256, "keys": 256, "views": 64, "dnssecPolicies": 64, "catalogs": 64,
	"zones": 1024, "records": 10000, "policies": 256,
}

// A Target is one XRD and the files it is written to, relative to the
// repository root.
type Target struct {
	Config func(crdDir string) Config
	Files  []string
}

// Targets are what gen-xrd writes.
var Targets = []Target{
	{Config: DefaultConfig, Files: []string{"package/configuration/xrd.yaml", "examples/crossplane/xrd.yaml"}},
	{Config: LegacyConfig, Files: []string{"package/configuration-claim/xrd.yaml", "examples/crossplane/claim/xrd.yaml"}},
}

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "fail when the written files are stale instead of writing them")
	flag.Parse()
	for _, tg := range Targets {
		out, err := Generate(tg.Config(filepath.Join(*root, "config", "crd")))
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen-xrd:", err)
			os.Exit(1)
		}
		write(*root, tg.Files, out, *check)
	}
}

func write(root string, files []string, out []byte, check bool) {
	for _, t := range files {
		p := filepath.Join(root, t)
		if check {
			old, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(old, out) {
				fmt.Fprintf(os.Stderr, "gen-xrd: %s is stale: run 'go run ./hack/gen-xrd'\n", t)
				os.Exit(1)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gen-xrd:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen-xrd:", err)
			os.Exit(1)
		}
	}
}

type obj = map[string]any

// specSchemas reads the spec schema of every kind in dir.
func specSchemas(dir string) (map[string]obj, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]obj{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema obj `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Spec.Group != v1alpha1.Group {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name != v1alpha1.Version {
				continue
			}
			props, _ := v.Schema.OpenAPIV3Schema["properties"].(obj)
			spec, ok := props["spec"].(obj)
			if !ok {
				return nil, fmt.Errorf("%s: no spec schema", f)
			}
			out[crd.Spec.Names.Kind] = spec
		}
	}
	for _, k := range v1alpha1.Kinds {
		if out[k] == nil {
			return nil, fmt.Errorf("%s: no CRD for kind %s", dir, k)
		}
	}
	return out, nil
}

// Generate returns the XRD.
func Generate(cfg Config) ([]byte, error) {
	specs, err := specSchemas(cfg.CRDDir)
	if err != nil {
		return nil, err
	}
	spec := deepCopy(specs[v1alpha1.KindBindCluster])
	spec["description"] = fmt.Sprintf("%s is one BIND cluster (the fields of a BindCluster's spec) with its ACLs, TSIG keys, views, "+
		"DNSSEC policies, catalog zones, zones, records and response policies inline. BindZone and DNSRecord objects in the same "+
		"namespace labelled %s: <name> join them.", cfg.Kind, xfn.SelectorLabel)
	if cfg.Cluster() {
		spec["description"] = fmt.Sprintf("%s is one BIND cluster (the fields of a BindCluster's spec) with its ACLs, TSIG keys, views, "+
			"DNSSEC policies, catalog zones, zones, records and response policies inline. Create it through a %s: the cluster is "+
			"named after the claim and its objects land in the claim's namespace, where BindZone and DNSRecord objects labelled "+
			"%s: <claim name> join it.", cfg.Kind, cfg.ClaimKind, xfn.SelectorLabel)
	}
	props, _ := spec["properties"].(obj)
	if props == nil {
		props = obj{}
		spec["properties"] = props
	}
	if cfg.Cluster() {
		if _, clash := props[xfn.NamespaceField]; clash {
			return nil, fmt.Errorf("BindCluster spec already has a field %q", xfn.NamespaceField)
		}
		props[xfn.NamespaceField] = obj{
			"type": "string",
			"description": fmt.Sprintf("Namespace to render into when the %s is created without a claim. With a claim the claim's "+
				"namespace is used, and this field may only repeat it.", cfg.Kind),
			"maxLength": 63,
			"pattern":   `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		}
	}
	for _, l := range xfn.Lists {
		if _, clash := props[l.Field]; clash {
			return nil, fmt.Errorf("BindCluster spec already has a field %q", l.Field)
		}
		props[l.Field] = listSchema(l, specs[l.Kind])
	}

	status := obj{
		"type": "object",
		"properties": obj{
			"bind": obj{
				"type":        "object",
				"description": "Where to reach the cluster and what the function manages.",
				"properties": obj{
					"namespace":        str("The namespace of the composed objects (a claim's own)."),
					"serveAddress":     str("The DNS name of the serve Service (<service>.<namespace>.svc)."),
					"serveService":     str("The Service that serves queries (the VIP)."),
					"primaryService":   str("The Service of pod 0 (transfers, dynamic updates)."),
					"headlessService":  str("The headless Service giving the pods DNS names."),
					"configMap":        str("The ConfigMap holding named.conf and the zone state."),
					"composedObjects":  obj{"type": "integer", "description": "How many objects the function composes."},
					"readyObjects":     obj{"type": "integer", "description": "How many of them are ready."},
					"tsigSecrets":      obj{"type": "array", "items": obj{"type": "string"}, "description": "The Secrets holding TSIG keys."},
					"zoneConfigMaps":   obj{"type": "array", "items": obj{"type": "string"}, "description": "The ConfigMaps holding zone files."},
					"dnssecDS":         obj{"type": "array", "items": obj{"type": "string"}, "description": "The DS record (SHA-256) of every signed zone's KSK or CSK, to publish in the parent zone."},
					"dnssecKeysSecret": str("The Secret holding the signing keys of the signed zones (back it up)."),
				},
			},
		},
	}
	version := obj{
		"name":          cfg.Version,
		"served":        true,
		"referenceable": true,
		"additionalPrinterColumns": []any{
			obj{"name": "Mode", "type": "string", "jsonPath": ".spec.mode"},
			obj{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
			obj{"name": "Service", "type": "string", "jsonPath": ".status.bind.serveService"},
		},
		"schema": obj{"openAPIV3Schema": obj{
			"type":        "object",
			"description": cfg.Kind + " composes a BIND 9 cluster with the bind-fn function.",
			"properties":  obj{"spec": spec, "status": status},
		}},
	}
	xrdSpec := obj{
		"group":    cfg.Group,
		"names":    obj{"kind": cfg.Kind, "plural": cfg.Plural},
		"versions": []any{version},
	}
	if cfg.Scope != "" {
		xrdSpec["scope"] = cfg.Scope
	}
	if cfg.ClaimKind != "" {
		xrdSpec["claimNames"] = obj{"kind": cfg.ClaimKind, "plural": cfg.ClaimPlural}
	}
	if len(cfg.ConnectionSecretKeys) > 0 {
		keys := make([]any, len(cfg.ConnectionSecretKeys))
		for i, k := range cfg.ConnectionSecretKeys {
			keys[i] = k
		}
		xrdSpec["connectionSecretKeys"] = keys
	}
	xrd := obj{
		"apiVersion": cfg.XRDAPIVersion,
		"kind":       "CompositeResourceDefinition",
		"metadata": obj{
			"name":   cfg.Plural + "." + cfg.Group,
			"labels": obj{"app.kubernetes.io/part-of": "bind-fn"},
		},
		"spec": xrdSpec,
	}
	body, err := yaml.Marshal(xrd)
	if err != nil {
		return nil, err
	}
	head := "# Code generated by hack/gen-xrd from config/crd; DO NOT EDIT.\n"
	return append([]byte(head), body...), nil
}

// listSchema is the schema of one inline list: {name, spec} entries with
// unique names, spec being the kind's own spec schema where clusterRef is
// optional (it defaults to the XR's name).
func listSchema(l xfn.List, kindSpec obj) obj {
	s := deepCopy(kindSpec)
	props, _ := s["properties"].(obj)
	if cr, ok := props["clusterRef"].(obj); ok {
		cr["description"] = "ClusterRef must be empty or the cluster's own name (the composite's, or its claim's): an inline entry belongs to it."
	}
	if req, ok := s["required"].([]any); ok {
		var keep []any
		for _, r := range req {
			if r != "clusterRef" {
				keep = append(keep, r)
			}
		}
		if len(keep) == 0 {
			delete(s, "required")
		} else {
			s["required"] = keep
		}
	}
	item := obj{
		"type": "object",
		"properties": obj{
			"name": obj{
				"type":        "string",
				"description": fmt.Sprintf("Name of the %s (the name references resolve, and the Secret of a key is named after).", l.Kind),
				"minLength":   1,
				"maxLength":   253,
				"pattern":     `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`,
			},
			"spec": s,
		},
		"required": []any{"name"},
	}
	if _, ok := s["required"]; ok {
		item["required"] = []any{"name", "spec"}
	}
	return obj{
		"type":                       "array",
		"description":                fmt.Sprintf("Inline %s objects of this cluster: each entry is the object's name and spec.", l.Kind),
		"items":                      item,
		"maxItems":                   maxItems[l.Field],
		"x-kubernetes-list-type":     "map",
		"x-kubernetes-list-map-keys": []any{"name"},
	}
}

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func deepCopy(o obj) obj {
	out := make(obj, len(o))
	for k, v := range o {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case obj:
		return deepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
