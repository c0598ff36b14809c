// Package generate holds the generators of "kdyn create": namespace,
// configmap, secret generic|tls|docker-registry, serviceaccount, role,
// clusterrole, rolebinding, clusterrolebinding, deployment, job, cronjob,
// service (clusterip, nodeport, loadbalancer, externalname), quota,
// priorityclass, poddisruptionbudget and ingress, which build an object from flags (--from-literal, --from-file,
// --from-env-file, --type, --cert/--key, --docker-*, --verb/--resource,
// --user/--group/--serviceaccount, --image/--schedule and a command after
// "--") instead of reading a manifest. create job --from=cronjob/NAME
// reads the CronJob and copies its job template as stored. NewRunCommand
// is "kdyn run", kubectl run's pod (and --expose service), and
// NewExposeCommand "kdyn expose", kubectl expose's service for a pod,
// service, replication controller, deployment or replica set, built the
// same way. run --attach (implied by -i) waits for its pod to be Ready,
// attaches through package pods (the one place where this family uses
// another's code, with delete's Send for --rm) and, with --restart=Never
// or OnFailure, waits for the pod to finish and exits with its
// container's exit code, as kubectl run does. create token is no generator: it POSTs a TokenRequest to a
// service account's token subresource and prints the token issued.
//
// # Output like kubectl's, byte for byte
//
// kubectl builds these objects as Go structs and prints them in the
// structs' member order (kind, apiVersion, metadata, data, ..., with
// metadata.namespace only when -n was given and no creationTimestamp), so
// a generated object here is an ordered list of members (fields), encoded
// by encoding/json member by member: -o json keeps that order, -o yaml
// sorts keys as kubectl's does, and --append-hash and --save-config hash
// and encode the same bytes kubectl does. bench/cli compares every
// generator's --dry-run=client output with kubectl v0.37.2's.
//
// # Requests
//
// None with --dry-run=client (the kubeconfig is read for the namespace),
// except that role and clusterrole read discovery to expand --resource
// names (rs.apps is replicasets) and job --from reads the CronJob, as
// kubectl's do;
// otherwise one POST, whose answer is printed as the server sent it (the
// typed object's order again), managedFields left out of json and yaml
// unless --show-managed-fields. A refused create is worded as kubectl
// words it ("error: failed to create configmap: ...") and keeps its exit
// code under --exit-codes.
package generate
