// Package root assembles the kdyn command line: Main runs it, the way
// cmd/kdyn/main.go calls it and tests call it in process, and
// NewRootCommand builds the cobra tree with the global flags, each
// family's commands, the exit-codes help topic and shell completion.
//
// # Errors and exit codes
//
// Main prints a command's error the way kubectl words it (see
// cli.ErrorMessage) on stderr and returns 1, or with --exit-codes the code
// that names the failure (cli.ExitCode): 2 for a usage error (a bad flag,
// argument or unknown command, even one found before the flags were
// parsed), 3 not found, 4 conflict, 5 forbidden, 6 invalid, 7 timeout,
// 8 unreachable. A command that already reported its failures returns a
// silent *cli.ExitError carrying the code.
//
// # Completion
//
// Commands that take resource arguments complete resource types from the
// discovery cache (no request while it is warm) and then object names, from
// a metadata-only list bounded to 5 s and 5000 names; --namespace,
// --context, --cluster and --user complete too. Errors complete nothing.
//
// # Help in other languages
//
// With LC_ALL, LC_MESSAGES or LANG naming a language kubectl has message
// catalogs for (de_DE, fr_FR, it_IT, ja_JP, ko_KR, pt_BR, zh_CN, zh_TW,
// as "de_DE.UTF-8"), help shows kubectl's translations
// (k8s.io/kubectl/pkg/util/i18n) of the texts kdyn shares with kubectl:
// the commands' short descriptions and the paragraphs of long ones that are
// kubectl's; kdyn's own paragraphs stay English. English help reads no
// catalog.
//
// Each call of Main builds its own command tree and factory.
//
//	code := root.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
package root
