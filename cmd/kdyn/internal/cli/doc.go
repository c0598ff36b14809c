// Package cli is the plumbing that every kdyn command shares; the command
// families (get, apply, generate, delete, edit, scale, wait, auth,
// explain, tree, config, serverinfo) sit on it and the root package
// assembles them.
//
// # Factory
//
// A Factory turns the global flags into what commands need, each built
// once on first use: kubeconfig (kubectl's loading rules and overrides) →
// rest.Config → a rest.Client whose transport logs at -v, prints server
// warnings once and notices a stale discovery cache (a deleted CRD's 404)
// → the dynamic client, a discovery client with its disk cache under
// --cache-dir (~/.kube/cache/kdyn/discovery/<host>), and a self-refreshing
// REST mapper. WriteClient decorates the dynamic client for a command's
// writes with the library's field-manager and dry-run decorators. One
// Factory serves one command line; its getters are not safe for concurrent
// first use, the clients they return are.
//
//	f := cli.NewFactory(flags, streams)
//	matches, err := f.Resolve(ctx, []string{"deploy/web"})
//
// # Output, flags and errors
//
// ParseOutput reads -o into an OutputSpec whose ObjectPrinter prints the
// object outputs; AddDryRunFlag adds --dry-run for commands with and
// without a client-side dry run. Errors are classified for exit codes by
// ExitCode: a *UsageError is a mistake in flags or arguments, an *ExitError
// carries its code (and, when Silent, has been reported already), and the
// library's errors keep their kinds (an *apierrors.StatusError from the
// server, meta's no-match error) through wrapping. ErrorMessage and
// PrintError word them as kubectl does.
//
// # Manifests and objects
//
// ReadEntries reads -f (files, directories, stdin) or -k (a kustomization,
// built by Kustomize with sigs.k8s.io/kustomize/api as kubectl builds it)
// into entries, a bad
// document becoming an entry with its error so the others still go;
// ApplyOrder and DeleteOrder put Namespaces and CRDs first or last. A
// ManifestRun maps each entry to its resource and namespace, waits for CRDs
// the run itself wrote, and reports each failure with its file and
// document; EachConcurrent sends several entries at once (Namespaces and
// CRDs first, one by one, then foundation kinds such as ServiceAccounts and
// ConfigMaps, then the rest) and still prints in document order, over
// BulkWriteClient (no client-side rate limit unless --qps or --burst).
// Place tells where an entry's object will go before it is sent.
// AddValidateFlag adds --validate (fieldValidation on every write). The object commands name their targets with NamedTargets or
// ResolveObjects (names, or -l / --field-selector / --all), print results
// with a ResultPrinter and collect per-object failures in ObjErrors.
package cli
