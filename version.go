package riptide

// Version is the release of riptide this source tree is, or will be when
// tagged: the version of every module in the repository (the core,
// compress, http3, ...), which are released together. Every go.mod in the
// repository requires its sibling modules at this version (a test in
// internal/release checks it); CHANGELOG.md's first entry is this version,
// and README.md ("Versions and compatibility") says what a v0 release
// promises.
const Version = "v0.1.0"
