package v1alpha1

// ConfName is the ACL's name in named.conf and the field it comes from:
// spec.aclName, or else the object's name.
func (a *BindACL) ConfName() (name, field string) {
	if a.Spec.ACLName != "" {
		return a.Spec.ACLName, "spec.aclName"
	}
	return a.Name, "metadata.name"
}

// ConfName is the policy's name in named.conf and the field it comes from:
// spec.policyName, or else the object's name.
func (p *BindDNSSECPolicy) ConfName() (name, field string) {
	if p.Spec.PolicyName != "" {
		return p.Spec.PolicyName, "spec.policyName"
	}
	return p.Name, "metadata.name"
}
