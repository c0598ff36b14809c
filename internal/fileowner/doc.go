// Package fileowner reports which user owns a file, for the checks that
// refuse a directory another user could have written: discovery's disk
// cache, which a poisoned document would turn against the program. Fake
// lets tests give a directory to another user without being root (only
// root may chown a file away), in this module's packages and in the
// CLI's end-to-end tests alike.
//
// Of is safe for concurrent use, also while a fake is in place. Fake
// changes what every caller sees until it is undone, so a test that fakes
// owners must not run in parallel with tests that stat the same paths.
//
//	restore := fileowner.Fake(map[string]int{dir: 65534})
//	defer restore()
//	uid, ok := fileowner.Of(dir, fi) // 65534, true
package fileowner
