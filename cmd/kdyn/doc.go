// Command kdyn is a kubectl-compatible command-line tool for any Kubernetes
// resource, built on the kdyn library: the same kubeconfig, global flags,
// resource names and output formats as kubectl, plus jsonl and gjson
// output, ownership trees, every-resource listing, neat manifests and a
// built-in diff. Run "kdyn --help" for the commands.
//
// # Layout
//
// main only calls root.Main. The commands live under internal/, one
// package per family over one package of shared plumbing:
//
//	root        Main, the command tree, shell completion
//	get         get, get -w
//	events      events, events -w
//	apply       apply, create -f, replace, diff
//	generate    create's generators (namespace, configmap, secret,
//	            ..., ingress, token), run, expose, autoscale
//	delete      delete
//	edit        edit, patch, label, annotate
//	scale       scale
//	wait        wait
//	rollout     rollout status, restart, history, undo
//	kustomize   kustomize (the build itself is cli's, for -k too)
//	auth        auth can-i, auth whoami, auth reconcile
//	explain     explain
//	pods        logs, exec, attach, port-forward, cp; the attach that
//	            run --attach and debug --attach use
//	remote      the streams of exec, attach and port-forward: WebSocket
//	            (v5.channel.k8s.io) with SPDY fallback, SPDY port
//	            forwarding
//	tree        tree
//	cluster     cluster-info (and dump), top node|pod
//	plugin      plugin list; kubectl-* executables on PATH run as
//	            subcommands (root hands the command line over)
//	config      config view, get-contexts, current-context, use-context,
//	            set*, unset, delete-*, rename-context
//	serverinfo  api-resources, api-versions, version
//	kuberc      kubectl's preferences file: flag defaults, aliases and
//	            the credential plugin policy, applied by root before
//	            the command line is parsed; kuberc view, kuberc set
//	cli         the shared plumbing: factory (kubeconfig → clients,
//	            mapper, disk-cached discovery), global flags, -o and
//	            --dry-run, errors and exit codes, manifest reading
//	printers    table, name, json, yaml, jsonl, jsonpath, gjson,
//	            go-template, custom-columns and diff output
//	clitest     helpers for the packages' tests
//
// Families import cli and printers, and each other only where a command
// does what another family's does: apply's replace --force deletes as
// delete does, rollout changes objects through mutate, run --attach and
// debug --attach attach through pods (and run --rm deletes through
// delete). Nothing in the library
// imports these packages (internal/depcheck checks it).
package main
