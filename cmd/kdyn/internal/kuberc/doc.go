// Package kuberc reads kubectl's preferences file, kuberc, and applies it
// to a kdyn command line the way kubectl v1.37 does; NewCommand is "kdyn
// kuberc", which shows (view) and changes (set) the file as kubectl's
// kuberc command does. KUBECTL_KUBERC=false turns all of it off, as
// kubectl's feature gate does.
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
// error: ...", the fields named as kubectl names them), the rest of the
// file still applies; a file without any document has no preferences
// (noted from -v 5 on).
//
// # The kuberc command
//
// kuberc view prints the file in its v1beta1 form (a v1alpha1 file
// converted, an allowlist entry's older name moved to command, no
// defaults or aliases shown as empty lists), as YAML by default, in the
// member order of kubectl's Go types for -o json; with no file at the
// default place it offers to write kubectl's default one. kuberc set adds
// a command's flag defaults, an alias, or the credential plugin policy
// (replacing existing defaults or an alias only with --overwrite, keeping
// what the flags leave out) and writes the whole file back as kubectl
// does (YAML, keys sorted, "Updated FILE"). Both refuse a file kubectl's
// command refuses (a field it does not know, no document at all) and
// flags it refuses, in its words.
package kuberc
