package objects

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Keys of a TSIG key Secret.
const (
	SecretKeyAlgorithm = "algorithm"
	SecretKeyKeyName   = "keyName"
	SecretKeySecret    = "secret"
)

// KeyConf renders a named.conf key statement:
//
//	key "<name>" {
//		algorithm <alg>;
//		secret "<b64>";
//	};
//
// The name is quoted and escaped so it cannot close the statement.
func KeyConf(name, algorithm string, secret []byte) string {
	return fmt.Sprintf("key %s {\n\talgorithm %s;\n\tsecret %s;\n};\n",
		quote(name), strings.ToLower(algorithm), quote(base64.StdEncoding.EncodeToString(secret)))
}

// quote returns s as a named.conf quoted string: backslash and double quote
// escaped, control characters (which no valid name holds) dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TSIGSecret is the Secret of a generated TSIG key: algorithm, keyName,
// secret (the base64 text of the material) and key.conf. The key's
// secretTemplate labels and annotations are stamped on it; managed labels
// win. It returns nil for an imported key: its Secret is managed elsewhere
// and never written.
func TSIGSecret(c *model.Cluster, k *model.Key, secret []byte) *corev1.Secret {
	if k == nil || k.Import {
		return nil
	}
	var userLabels, annotations map[string]string
	if k.Template != nil {
		userLabels, annotations = k.Template.Labels, k.Template.Annotations
	}
	alg := strings.ToLower(k.Algorithm)
	if alg == "" {
		alg = model.DefaultAlgorithm
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(c, k.SecretName, ComponentTSIG, userLabels, annotations),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			SecretKeyAlgorithm: []byte(alg),
			SecretKeyKeyName:   []byte(k.KeyName),
			SecretKeySecret:    []byte(base64.StdEncoding.EncodeToString(secret)),
			layout.KeyConfFile: []byte(KeyConf(k.KeyName, alg, secret)),
		},
	}
}

// KeysSecret is the <cluster>-keys Secret: the key statement of every key
// the function generates for the cluster, one file <secret>.conf each. The
// pod mounts this one Secret for all of them, so adding a key or a view
// changes no volume of the pod template.
func KeysSecret(c *model.Cluster, files map[string][]byte) *corev1.Secret {
	return filesSecret(c, layout.KeysSecretName(c.Name), ComponentKeys, files)
}

// filesSecret is a cluster's Secret holding files (a copy of them).
func filesSecret(c *model.Cluster, name, component string, files map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(c, name, component, nil, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       maps.Clone(files),
	}
}
