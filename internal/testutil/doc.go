// Package testutil builds what tests of the upper layers share: rendered
// clusters laid out as a pod sees them, inputs read from testdata, a
// deterministic random source. It imports the renderer; the helpers that
// import nothing of the project live at the leaves, usable from every
// package's tests: internal/testutil/bindtools (BIND tools, root, bin/ CLIs,
// loopback ports) and internal/testutil/golden (golden files and -update).
package testutil
