// Package kubeconfig loads kubeconfig files the way kubectl does and turns
// them into a *rest.Config and a default namespace.
//
// It parses the files itself (apiVersion v1, kind Config) into Config,
// whose clusters, users (AuthInfos) and contexts are maps keyed by name,
// each entry recording the file it came from. It does not depend on
// client-go.
//
// # Loading rules
//
// LoadingRules names the files; NewDefaultLoadingRules gives kubectl's
// rules:
//
//   - An explicit path (kdyn's --kubeconfig) means that file only; a missing
//     file is an error naming it.
//   - Otherwise the files listed in KUBECONFIG (filepath.SplitList) are
//     merged. Missing ones are skipped. For each cluster, user and context
//     name, and for current-context, the first file that sets it wins.
//   - Otherwise ~/.kube/config is read; it may be missing.
//
// Relative paths inside a file (certificate-authority, client-certificate,
// client-key, tokenFile, and an exec command with a path separator) are
// relative to that file's directory; Load makes them absolute.
//
// Resolve does it all in one call: load, select the context, apply
// Overrides (kubectl's global flags: --context, --namespace, --server,
// --token, --as, ...). When no file was named and the files found define
// nothing, it uses the in-cluster configuration if KUBERNETES_SERVICE_HOST
// and KUBERNETES_SERVICE_PORT are set (see InClusterConfig); otherwise it
// returns an error wrapping ErrNoConfig that says how to provide one.
//
// The namespace of a Result is the override, else the context's namespace,
// else "default" (in a cluster: the pod's namespace).
//
// # Credentials
//
// Every kubeconfig authentication form maps onto rest.Config: token,
// tokenFile, client certificates (files or data), username/password,
// impersonation (as, as-uid, as-groups, as-user-extra) and exec credential
// plugins. A cluster's proxy-url (http, https or socks5) becomes
// rest.Config.Proxy. The legacy auth-provider stanza is refused with an
// error suggesting an exec plugin.
//
// # Writing
//
// UseContext writes current-context back to the file it came from, like
// `kubectl config use-context`, changing only that line when it can.
// Config.View prints a configuration with secrets hidden ("REDACTED") and
// certificate data omitted ("DATA+OMITTED") unless asked for raw output.
// Write saves a whole Config. Editor makes the changes of kubectl's
// config set-cluster, set-credentials, set-context, set, unset, delete-*
// and rename-context: an existing entry is changed in the file that
// defines it, a new one goes to the file kubectl would choose
// (Editor.DefaultFile), and everything else in the files is kept.
//
// # Errors
//
// Errors name the file and field at fault: malformed YAML (with its line),
// a value of the wrong type (with its place, such as
// users["alice"].user.token, and what belongs there; an unquoted value
// that YAML reads as a number or a bool in a string field is told to be
// quoted, as client-go also rejects it), bad base64 in a *-data field, a
// missing certificate or token file.
// Unknown context, cluster and user names are a *NotFoundError listing the
// names that are defined. Tokens, passwords and keys never appear in
// errors. Parse and Load return errors, never panic, on any input.
//
// # Concurrency
//
// Loading functions are safe to call concurrently. A Config is a plain
// value: do not modify one while another goroutine reads it. Writes use an
// atomic rename but no lock, so two processes writing the same file at once
// may lose one update.
//
// # Example
//
//	res, err := kubeconfig.Resolve(nil, kubeconfig.Overrides{Namespace: ns})
//	if err != nil {
//		return err
//	}
//	client, err := dynamic.NewForConfig(res.Config)
//	...
//	list, err := client.Resource(podsGVR).Namespace(res.Namespace).List(ctx, metav1.ListOptions{})
package kubeconfig
