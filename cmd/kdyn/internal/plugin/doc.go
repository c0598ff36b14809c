// Package plugin runs kubectl plugins: executables named kubectl-NAME on
// PATH, which kdyn runs unchanged, as kubectl v1.37 does, so that a script
// written for kubectl and its plugins works with kdyn.
//
// # Running a plugin
//
// Resolve decides, before the command line is parsed, whether it runs a
// plugin. A command of kdyn always wins: only when the first words of the
// command line name no command of kdyn (or name "create" and then no
// create subcommand of kdyn) does kdyn look for a plugin. The words before
// the first flag make the name, each dash in a word turned into an
// underscore and the words joined with dashes ("kdyn foo-bar baz x" looks
// for kubectl-foo_bar-baz-x, kubectl-foo_bar-baz, then kubectl-foo_bar);
// the longest name found on PATH runs, with the rest of the command line
// as its arguments. Under create only names that keep "create" and the
// word after it are tried (kubectl-create-foo, never kubectl-create).
// "help" and shell completion's requests never run a plugin.
//
// Match.Run runs the plugin with kdyn's environment, $KUBECTL_PATH set to
// kdyn: on Unix it replaces kdyn's process (syscall.Exec), as kubectl
// does; elsewhere it runs the plugin as a child and exits with its code.
//
// Flags before a plugin's name are refused, in kubectl's words ("flags
// cannot be placed before plugin name: -n"). kubectl refuses them before
// any word it has no command for; kdyn refuses them only when the words
// after the flags name a plugin, and otherwise reports the unknown command
// as it always has.
//
// # The plugin command
//
// NewCommand is "kdyn plugin"; its subcommand list prints the plugins on
// PATH (--name-only: their file names) as kubectl's plugin list does, with
// its warnings on standard error: a file that is not executable, one that
// an earlier one of the same name on PATH shadows, one whose name is a
// command of kdyn. Warnings, or no plugin at all, make it fail (exit
// code 1).
package plugin
