// Package kuberc reads kubectl's preferences file, kuberc, and applies it
// to a kdyn command line the way kubectl v1.37 does.
//
// The file is the one --kuberc names, else the one $KUBERC names, else
// ~/.kube/kuberc; KUBERC=off turns preferences off. Its first YAML
// document of kind Preference in kubectl.config.k8s.io (v1beta1, or
// v1alpha1 with its older field names) is used:
//
//   - defaults: for a command (as typed: "apply", "create secret generic"),
//     new default values of its flags, which a flag given on the command line
//     still overrides;
//   - aliases: a new command name that runs an existing command with flag
//     defaults of its own and arguments inserted after the alias
//     (prependArgs) or at the end (appendArgs); an alias cannot shadow a
//     command kdyn has;
//   - credentialPluginPolicy and credentialPluginAllowlist: which exec
//     credential plugins may run (AllowAll, DenyAll, or Allowlist: only
//     those whose command resolves to the same executable as an entry's).
//
// As kubectl: a file named with --kuberc or $KUBERC must load; a missing
// ~/.kube/kuberc is ignored and another problem with it is a warning; a
// field kubectl does not know is a warning ("ignoring strict decoding
// error"), the rest of the file still applies.
package kuberc
