// Package corpus holds external oracles: inputs nobody here chose. ISC's
// own BIND system-test inputs (testdata/isc/<commit>/, copied by copy.sh from
// https://github.com/isc-projects/bind9, MPL-2.0) are converted into
// packages, record by record (zone files) and statement by statement
// (dnssec-policy blocks), and the tests hold fn-validate's verdict on each
// package to BIND's verdict on the original, on BIND 9.18 and 9.20. Every
// known difference is listed, with its reason, in the tests and in
// docs/validation.md ("The corpus").
package corpus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

func metaType(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: kind}
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: Namespace}
}
