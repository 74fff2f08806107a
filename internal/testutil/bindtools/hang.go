package bindtools

import "time"

// Hang bounds every wait a test makes for something that should happen (a
// pod ready, a record served, a process gone). It is a guard against a test
// hanging, never a performance target: on a busy 2-core runner things that
// take 2 s idle took more than 15 s. A test that wants to know how long a
// step took logs it (t.Logf); the figures and their budgets are in
// BENCHMARKS.md ("Timings the tests log").
const Hang = 2 * time.Minute
