package controlplane

import "time"

// Hang bounds every wait of the Kubernetes tests for something that should
// happen (the API server ready, a CRD established, pods Ready, a record
// served): a guard against hanging, never a performance target. The tests
// log how long each step took. (The main module's tests use bindtools.Hang;
// this module does not import the main one.)
const Hang = 5 * time.Minute
