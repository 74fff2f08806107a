package objects

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

func TestGolden(t *testing.T) {
	tsig := &model.Key{KeyName: "ddns.example.com", Algorithm: "hmac-sha512", SecretName: "ddns-tsig",
		Template: &v1alpha1.SecretMetadata{
			Labels:      map[string]string{"reflector": "yes", LabelInstance: "not-this"},
			Annotations: map[string]string{"reflector.v1.k8s.emberstack.com/reflection-allowed": "true"},
		}}
	xfr := &model.Key{KeyName: "ns-xfr", Algorithm: "hmac-sha256", SecretName: layout.TransferKeySecretName("ns", ""), Internal: true}

	cases := map[string]struct {
		reason string
		objs   func() []any
	}{
		"minimal/statefulset.yaml": {
			reason: "defaults only, no namespace, no storage: emptyDir data, no shards or keys",
			objs:   func() []any { return []any{StatefulSet(minimalCluster(), PodPlan{})} },
		},
		"minimal/services.yaml": {
			reason: "ClusterIP Services, no ETP, single stack",
			objs: func() []any {
				c := minimalCluster()
				return []any{HeadlessService(c), PrimaryService(c), ServeService(c)}
			},
		},
		"minimal/pdb.yaml": {
			reason: "one replica still gets maxUnavailable 1",
			objs:   func() []any { return []any{PodDisruptionBudget(minimalCluster())} },
		},
		"minimal/configmap.yaml": {
			reason: "config ConfigMap with data, zones shard with annotations",
			objs: func() []any {
				c := minimalCluster()
				return []any{
					ConfigMap(c, layout.ConfigMapName("dns"), ComponentConfig, map[string]string{
						layout.NamedConfSecondary: "options {};\n", layout.NamedConfPrimary: "options {};\n", layout.AgentConfig: "{}\n",
					}, nil),
					ConfigMap(c, layout.ZonesConfigMapName("dns", 0), ComponentZones, map[string]string{"example.com.zone": "$TTL 60\n"},
						map[string]string{"bind.unkin.net/zones": "example.com."}),
				}
			},
		},
		"full/statefulset.yaml": {
			reason: "every spec field the pod template reads; PVC; two shards; keys sorted and de-duplicated",
			objs:   func() []any { return []any{StatefulSet(fullCluster(), fullPlan())} },
		},
		"full/services.yaml": {
			reason: "LoadBalancer serve Service with ETP Local (views match clients), user labels lose to managed; NodePort primary with explicit Cluster; dual stack",
			objs: func() []any {
				c := fullCluster()
				return []any{HeadlessService(c), PrimaryService(c), ServeService(c)}
			},
		},
		"full/pdb.yaml": {
			reason: "namespaced PDB",
			objs:   func() []any { return []any{PodDisruptionBudget(fullCluster())} },
		},
		"full/secrets.yaml": {
			reason: "TSIG Secret with template metadata (managed labels win), internal transfer key",
			objs: func() []any {
				c := fullCluster()
				return []any{TSIGSecret(c, tsig, material(64)), TSIGSecret(c, xfr, material(32))}
			},
		},
		"hidden/statefulset.yaml": {
			reason: "hidden primary: --hidden-primary flag, maxUnavailable 2",
			objs: func() []any {
				return []any{StatefulSet(hiddenCluster(), PodPlan{ZoneConfigMaps: []string{"hidden-zones-0"}})}
			},
		},
		"hidden/services.yaml": {
			reason: "hidden primary: serve Service does not publish not-ready pods, primary and headless do",
			objs: func() []any {
				c := hiddenCluster()
				return []any{HeadlessService(c), PrimaryService(c), ServeService(c)}
			},
		},
		"hidden/pdb.yaml": {
			reason: "hidden primary: the PDB leaves pod 0 out",
			objs:   func() []any { return []any{PodDisruptionBudget(hiddenCluster())} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Log(tc.reason)
			golden.Check(t, filepath.Join("testdata", name), docs(t, tc.objs()...))
		})
	}
}

// TestDeterminism builds every object twice from fresh inputs: same bytes.
func TestDeterminism(t *testing.T) {
	build := func() []byte {
		c := fullCluster()
		k := &model.Key{KeyName: "k", Algorithm: "hmac-sha256", SecretName: "k-tsig",
			Template: &v1alpha1.SecretMetadata{Labels: map[string]string{"a": "1", "b": "2", "c": "3"}}}
		return docs(t, StatefulSet(c, fullPlan()), HeadlessService(c), PrimaryService(c), ServeService(c),
			PodDisruptionBudget(c), TSIGSecret(c, k, material(32)),
			ConfigMap(c, "x", ComponentZones, map[string]string{"z": "1", "a": "2", "m": "3"}, map[string]string{"q": "1", "b": "2"}))
	}
	first := build()
	for range 20 {
		if got := build(); !bytes.Equal(first, got) {
			t.Fatalf("output differs between builds:\n%s", cmp.Diff(string(first), string(got)))
		}
	}
}

// TestStatefulSetIgnoresConfigContent: two clusters that differ only in
// zones, records, keys, ACLs, views and catalogs — everything that reaches
// the pods through their mounted volumes — give byte-identical StatefulSets
// for the same PodPlan, so a config change never rolls the pods (docs/design.md#no-runtime-address).
func TestStatefulSetIgnoresConfigContent(t *testing.T) {
	plan := fullPlan()
	a := fullCluster()

	b := fullCluster()
	ttl := int32(30)
	zone := &model.Zone{Name: "example.com.", Spec: v1alpha1.BindZoneSpec{ZoneName: "example.com", Type: v1alpha1.ZonePrimary, DynamicUpdate: true},
		RRsets: []*model.RRset{{Name: "www", Type: "A", TTL: &ttl, Values: []string{"192.0.2.1"}}}}
	b.Views[0].Zones = []*model.Zone{zone}
	b.Views[0].MatchClients = []string{"10.1.0.0/16", "key ddns.example.com"}
	b.Views[0].TransferKey = &model.Key{KeyName: "xfr", Algorithm: "hmac-sha512", SecretName: "xfr-tsig"}
	b.Views[0].Catalog = &model.Catalog{ZoneName: "catalog.example.", DefaultPrimaries: []string{"198.51.100.1"}}
	b.Views[1].Policies = []*model.Policy{{ZoneName: "rpz.example."}}
	b.Keys = []*model.Key{{KeyName: "ddns.example.com", Algorithm: "hmac-sha256", SecretName: "ddns-tsig"}}
	b.ACLs = []*model.ACL{{Name: "trusted", Elements: []string{"10.0.0.0/8"}}}
	b.DNSSECPolicies = []*model.DNSSECPolicy{{Name: "default"}}

	ya, yb := docs(t, StatefulSet(a, plan)), docs(t, StatefulSet(b, plan))
	if diff := cmp.Diff(string(ya), string(yb)); diff != "" {
		t.Errorf("StatefulSet depends on configuration content (-a +b):\n%s", diff)
	}
	// And ConfigHash never reaches it.
	plan2 := plan
	plan2.ConfigHash = "something-else"
	if got := docs(t, StatefulSet(a, plan2)); !bytes.Equal(ya, got) {
		t.Error("PodPlan.ConfigHash changed the StatefulSet")
	}
	if bytes.Contains(ya, []byte("must-not-appear")) {
		t.Error("PodPlan.ConfigHash appears in the StatefulSet")
	}
}

// TestPodMounts checks the mount rules on every case: whole mounts (no
// subPath), ConfigMaps and Secrets read-only, writable run/data/agent-bin,
// every mount backed by a volume or claim template, paths from layout.
func TestPodMounts(t *testing.T) {
	cases := map[string]struct {
		reason string
		c      *model.Cluster
		plan   PodPlan
		want   map[string]string // mount path -> volume name
	}{
		"Minimal": {
			reason: "config and four optional shard slots mounted under MountedDir, the directories the agent lays them into, the keys Secret, the optional DNSSEC key Secret, run, data, agent-bin, the API token; no rndc Secret (the agent makes the key)",
			c:      minimalCluster(),
			want: map[string]string{
				layout.MountedConfigDir: VolumeConfig, layout.RunDir: VolumeRun,
				layout.DataDir: VolumeData, layout.AgentBinDir: VolumeAgentBin, layout.DNSSECDir: VolumeDNSSEC,
				layout.ConfigDir: VolumeConfigLive, layout.ZonesDir: VolumeZonesLive, layout.ServiceAccountDir: VolumeAPIToken,
				layout.MountedZonesDir + "/0": "zones-0", layout.MountedZonesDir + "/1": "zones-1",
				layout.MountedZonesDir + "/2": "zones-2", layout.MountedZonesDir + "/3": "zones-3",
				filepath.Dir(layout.GeneratedKeyFile(minimalCluster().Name, "x")): VolumeKeys,
			},
		},
		"Full": {
			reason: "shards mounted at MountedZonesDir/<i> and laid at ZonesDir/<i>, imported keys at KeysDir/<secret>, data from the claim template",
			c:      fullCluster(),
			plan:   fullPlan(),
			want: map[string]string{
				layout.MountedConfigDir: VolumeConfig, layout.RunDir: VolumeRun,
				layout.DataDir: VolumeData, layout.AgentBinDir: VolumeAgentBin, layout.DNSSECDir: VolumeDNSSEC,
				layout.ConfigDir: VolumeConfigLive, layout.ZonesDir: VolumeZonesLive, layout.ServiceAccountDir: VolumeAPIToken,
				layout.MountedZonesDir + "/0": "zones-0", layout.MountedZonesDir + "/1": "zones-1",
				layout.MountedZonesDir + "/2": "zones-2", layout.MountedZonesDir + "/3": "zones-3",
				filepath.Dir(layout.GeneratedKeyFile(fullCluster().Name, "x")): VolumeKeys,
				filepath.Dir(layout.KeyFile("ddns-tsig", "x")):                 KeyVolumeName("ddns-tsig"),
				filepath.Dir(layout.KeyFile("ns-xfr-tsig", "x")):               KeyVolumeName("ns-xfr-tsig"),
				filepath.Dir(layout.KeyFile("xfr.internal.tsig", "x")):         KeyVolumeName("xfr.internal.tsig"),
			},
		},
		"ExternalSecrets": {
			reason: "spec.secrets external: no keys Secret, every key Secret mounted at KeysDir/<secret>",
			c: func() *model.Cluster {
				c := minimalCluster()
				c.Spec.Secrets = v1alpha1.SecretsExternal
				return c
			}(),
			plan: PodPlan{KeySecrets: []string{"ns-xfr-tsig", "ddns-tsig"}},
			want: map[string]string{
				layout.MountedConfigDir: VolumeConfig, layout.RunDir: VolumeRun,
				layout.DataDir: VolumeData, layout.AgentBinDir: VolumeAgentBin, layout.DNSSECDir: VolumeDNSSEC,
				layout.ConfigDir: VolumeConfigLive, layout.ZonesDir: VolumeZonesLive, layout.ServiceAccountDir: VolumeAPIToken,
				layout.MountedZonesDir + "/0": "zones-0", layout.MountedZonesDir + "/1": "zones-1",
				layout.MountedZonesDir + "/2": "zones-2", layout.MountedZonesDir + "/3": "zones-3",
				filepath.Dir(layout.KeyFile("ddns-tsig", "x")):   KeyVolumeName("ddns-tsig"),
				filepath.Dir(layout.KeyFile("ns-xfr-tsig", "x")): KeyVolumeName("ns-xfr-tsig"),
			},
		},
	}
	writable := map[string]bool{VolumeRun: true, VolumeData: true, VolumeAgentBin: true, VolumeConfigLive: true, VolumeZonesLive: true}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sts := StatefulSet(tc.c, tc.plan)
			vols := map[string]corev1.Volume{}
			for _, v := range sts.Spec.Template.Spec.Volumes {
				vols[v.Name] = v
			}
			for _, pvc := range sts.Spec.VolumeClaimTemplates {
				vols[pvc.Name] = corev1.Volume{Name: pvc.Name}
			}
			got := map[string]string{}
			for _, ctr := range append(sts.Spec.Template.Spec.InitContainers, sts.Spec.Template.Spec.Containers...) {
				for _, m := range ctr.VolumeMounts {
					if m.SubPath != "" || m.SubPathExpr != "" {
						t.Errorf("%s: %s uses subPath: kubelet never updates it", ctr.Name, m.MountPath)
					}
					v, ok := vols[m.Name]
					if !ok {
						t.Errorf("%s: mount %s names no volume %q", ctr.Name, m.MountPath, m.Name)
					}
					if (v.ConfigMap != nil || v.Secret != nil) && !m.ReadOnly {
						t.Errorf("%s: %s is a ConfigMap/Secret mount but not read-only", ctr.Name, m.MountPath)
					}
					if writable[m.Name] == m.ReadOnly {
						t.Errorf("%s: %s readOnly=%v, want %v", ctr.Name, m.MountPath, m.ReadOnly, !writable[m.Name])
					}
					if ctr.Name == ContainerNamed {
						got[m.MountPath] = m.Name
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: named mounts -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	c := &model.Cluster{Name: "dns"}
	cases := map[string]struct {
		reason string
		got    map[string]string
		want   map[string]string
	}{
		"Labels": {
			reason: "all five app.kubernetes.io labels",
			got:    Labels(c, "server"),
			want: map[string]string{
				"app.kubernetes.io/name": "bind", "app.kubernetes.io/instance": "dns", "app.kubernetes.io/component": "server",
				"app.kubernetes.io/managed-by": "bind-fn", "app.kubernetes.io/part-of": "bind-fn",
			},
		},
		"SelectorLabels": {
			reason: "name and instance only: a StatefulSet selector is immutable",
			got:    SelectorLabels(c),
			want:   map[string]string{"app.kubernetes.io/name": "bind", "app.kubernetes.io/instance": "dns"},
		},
		"PrimarySelector": {
			reason: "pod 0 only, by the controller's pod-name label",
			got:    PrimaryService(c).Spec.Selector,
			want: map[string]string{"app.kubernetes.io/name": "bind", "app.kubernetes.io/instance": "dns",
				"statefulset.kubernetes.io/pod-name": "dns-0"},
		},
		"ServeSelector": {
			reason: "every pod; readiness leaves a hidden primary out",
			got:    ServeService(&model.Cluster{Name: "dns", Spec: v1alpha1.BindClusterSpec{HiddenPrimary: true}}).Spec.Selector,
			want:   map[string]string{"app.kubernetes.io/name": "bind", "app.kubernetes.io/instance": "dns"},
		},
		"UserLabelsLose": {
			reason: "spec.service.labels cannot override a managed label",
			got: ServeService(&model.Cluster{Name: "dns", Spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{
				Labels: map[string]string{LabelInstance: "x", LabelComponent: "y", "extra": "z"}}}}).Labels,
			want: map[string]string{
				"app.kubernetes.io/name": "bind", "app.kubernetes.io/instance": "dns", "app.kubernetes.io/component": "serve",
				"app.kubernetes.io/managed-by": "bind-fn", "app.kubernetes.io/part-of": "bind-fn", "extra": "z",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSelectorsMatchPods: every selector selects the pod template's labels.
func TestSelectorsMatchPods(t *testing.T) {
	c := fullCluster()
	pod := StatefulSet(c, PodPlan{}).Spec.Template.Labels
	pod0 := map[string]string{LabelPodName: PodName(c, 0)}
	for k, v := range pod {
		pod0[k] = v
	}
	for name, sel := range map[string]map[string]string{
		"statefulset": StatefulSet(c, PodPlan{}).Spec.Selector.MatchLabels,
		"headless":    HeadlessService(c).Spec.Selector,
		"serve":       ServeService(c).Spec.Selector,
		"primary":     PrimaryService(c).Spec.Selector,
		"pdb":         PodDisruptionBudget(c).Spec.Selector.MatchLabels,
	} {
		for k, v := range sel {
			if pod0[k] != v {
				t.Errorf("%s selector %s=%s does not match pod 0", name, k, v)
			}
		}
	}
}

func TestExternalTrafficPolicy(t *testing.T) {
	lb := func(etp corev1.ServiceExternalTrafficPolicy) *v1alpha1.ClusterServiceSpec {
		return &v1alpha1.ClusterServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: etp}
	}
	views := []*model.View{{Name: "a", MatchClients: []string{"10.0.0.0/8"}}}
	cases := map[string]struct {
		reason string
		c      *model.Cluster
		s      *v1alpha1.ClusterServiceSpec
		want   corev1.ServiceExternalTrafficPolicy
	}{
		"NoSpec":            {reason: "no Service spec: ClusterIP, unset", c: &model.Cluster{}, want: ""},
		"ClusterIP":         {reason: "never on ClusterIP, even with views", c: &model.Cluster{HasViews: true, Views: views}, s: &v1alpha1.ClusterServiceSpec{}, want: ""},
		"ClusterIPExplicit": {reason: "explicit ETP on ClusterIP is dropped (Validate reports it)", c: &model.Cluster{}, s: &v1alpha1.ClusterServiceSpec{ExternalTrafficPolicy: "Local"}, want: ""},
		"LBPlain":           {reason: "LB without address matching: Kubernetes' default", c: &model.Cluster{}, s: lb(""), want: ""},
		"LBViews":           {reason: "views match clients: Local", c: &model.Cluster{HasViews: true, Views: views}, s: lb(""), want: "Local"},
		"LBViewsNoClients":  {reason: "views matching no clients by address", c: &model.Cluster{HasViews: true, Views: []*model.View{{Name: "a"}}}, s: lb(""), want: ""},
		"LBACL":             {reason: "an ACL: Local", c: &model.Cluster{ACLs: []*model.ACL{{Name: "a"}}}, s: lb(""), want: "Local"},
		"NodePortAllowQuery": {reason: "allow-query on a NodePort: Local",
			c: &model.Cluster{Spec: v1alpha1.BindClusterSpec{AllowQuery: []string{"10.0.0.0/8"}}},
			s: &v1alpha1.ClusterServiceSpec{Type: corev1.ServiceTypeNodePort}, want: "Local"},
		"LBAllowRecursion": {reason: "allow-recursion: Local", c: &model.Cluster{Spec: v1alpha1.BindClusterSpec{AllowRecursion: []string{"10.0.0.0/8"}}}, s: lb(""), want: "Local"},
		"LBRateLimit":      {reason: "RRL buckets by client prefix: Local", c: &model.Cluster{Spec: v1alpha1.BindClusterSpec{RateLimit: &v1alpha1.RateLimitSpec{ResponsesPerSecond: 10}}}, s: lb(""), want: "Local"},
		"LBExplicit":       {reason: "explicit wins over the default", c: &model.Cluster{HasViews: true, Views: views}, s: lb("Cluster"), want: "Cluster"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ExternalTrafficPolicy(tc.c, tc.s); got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.reason, got, tc.want)
			}
			tc.c.Spec.Service = tc.s
			if got := ServeService(tc.c).Spec.ExternalTrafficPolicy; got != tc.want {
				t.Errorf("%s: ServeService got %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	c := minimalCluster()
	k := &model.Key{KeyName: "k", SecretName: "k-tsig"}
	y := docs(t, StatefulSet(c, PodPlan{}), HeadlessService(c), PrimaryService(c), ServeService(c),
		PodDisruptionBudget(c), TSIGSecret(c, k, material(32)), ConfigMap(c, "x", ComponentConfig, nil, nil))
	if bytes.Contains(y, []byte("namespace:")) {
		t.Errorf("an object carries a namespace though the cluster has none:\n%s", y)
	}
	c.Namespace = "dns-system"
	for _, o := range []any{StatefulSet(c, PodPlan{}), HeadlessService(c), PrimaryService(c), ServeService(c),
		PodDisruptionBudget(c), TSIGSecret(c, k, material(32)), ConfigMap(c, "x", ComponentConfig, nil, nil)} {
		m, err := ToMap(o)
		if err != nil {
			t.Fatal(err)
		}
		md := m["metadata"].(map[string]any)
		if md["namespace"] != "dns-system" {
			t.Errorf("%v %v: namespace %v, want dns-system", m["kind"], md["name"], md["namespace"])
		}
		if m["apiVersion"] == nil || m["kind"] == nil {
			t.Errorf("%v: no apiVersion/kind", md["name"])
		}
		if _, ok := m["status"]; ok {
			t.Errorf("%v: status serialised", md["name"])
		}
	}
}

func TestTSIGSecret(t *testing.T) {
	c := minimalCluster()
	cases := map[string]struct {
		reason string
		k      *model.Key
		want   map[string]string
	}{
		"Imported": {reason: "never rendered for an imported key", k: &model.Key{KeyName: "k", SecretName: "k", Import: true}},
		"Nil":      {reason: "nil key, nil Secret"},
		"DefaultAlgorithm": {
			reason: "empty algorithm is hmac-sha256, upper case is lowered",
			k:      &model.Key{KeyName: "k.example.", SecretName: "k-tsig"},
			want: map[string]string{
				"algorithm": "hmac-sha256", "keyName": "k.example.", "secret": "AQgPFh0kKzI=",
				"key.conf": "key \"k.example.\" {\n\talgorithm hmac-sha256;\n\tsecret \"AQgPFh0kKzI=\";\n};\n",
			},
		},
		"Escaped": {
			reason: "a hostile key name cannot close the statement",
			k:      &model.Key{KeyName: "a\"; }; include \"/etc/passwd", Algorithm: "HMAC-SHA256", SecretName: "k-tsig"},
			want: map[string]string{
				"algorithm": "hmac-sha256", "keyName": "a\"; }; include \"/etc/passwd", "secret": "AQgPFh0kKzI=",
				"key.conf": "key \"a\\\"; }; include \\\"/etc/passwd\" {\n\talgorithm hmac-sha256;\n\tsecret \"AQgPFh0kKzI=\";\n};\n",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := TSIGSecret(c, tc.k, material(8))
			if tc.want == nil {
				if s != nil {
					t.Errorf("%s: got a Secret", tc.reason)
				}
				return
			}
			got := map[string]string{}
			for k, v := range s.Data {
				got[k] = string(v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if s.Type != corev1.SecretTypeOpaque || s.Name != tc.k.SecretName {
				t.Errorf("%s: type %q name %q", tc.reason, s.Type, s.Name)
			}
		})
	}
}

// TestKeyFilesCheckconf runs named-checkconf over a generated key.conf of
// every algorithm: BIND must accept what the pods include.
func TestKeyFilesCheckconf(t *testing.T) {
	c := minimalCluster()
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, alg := range vocab.TSIGNames() {
		a, _ := vocab.TSIGByName(alg)
		n := a.Size
		s := TSIGSecret(c, &model.Key{KeyName: "xfr." + alg + ".example.", Algorithm: alg, SecretName: "s"}, material(n))
		files[alg+".conf"] = s.Data[layout.KeyConfFile]
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
			out, err := r.Offline(t, "named-checkconf", p).CombinedOutput()
			return string(out), err
		}); err != nil {
			t.Errorf("named-checkconf %s: %v\n%s\n%s", name, err, out, b)
		}
	}
}

// TestUndefaultedCluster: the builders never panic on a spec the model did
// not default (nil agent, zero replicas), and fall back to the defaults.
func TestUndefaultedCluster(t *testing.T) {
	c := &model.Cluster{Name: "x", Spec: v1alpha1.BindClusterSpec{Storage: &v1alpha1.StorageSpec{Size: "not-a-size"}}}
	sts := StatefulSet(c, PodPlan{})
	_ = docs(t, sts, HeadlessService(c), PrimaryService(c), ServeService(c), PodDisruptionBudget(c), ConfigMap(c, "x", ComponentConfig, nil, nil))
	got := []string{
		sts.Spec.Template.Spec.Containers[0].Image,
		sts.Spec.Template.Spec.InitContainers[0].Image,
		sts.Spec.Template.Spec.Containers[0].Command[5],
		sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(),
	}
	want := []string{model.DefaultImage, model.DefaultAgentImage, ":9119", DefaultStorageSize}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if *sts.Spec.Replicas != 1 {
		t.Errorf("replicas %d, want 1", *sts.Spec.Replicas)
	}
}
