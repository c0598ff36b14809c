package pods

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

const logsUsage = "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]"

// logsUsageError is kubectl's refusal of logs without a pod or selector.
var logsUsageError = "expected '" + logsUsage + "'.\nPOD or TYPE/NAME is a required argument for the logs command"

type logsOptions struct {
	container     string
	allContainers bool
	allPods       bool
	follow        bool
	previous      bool
	timestamps    bool
	prefix        bool
	ignoreErrors  bool
	insecure      bool
	selector      string
	since         time.Duration
	sinceTime     string
	tail          int64
	limitBytes    int64
	maxRequests   int
	podTimeout    time.Duration
}

// NewLogsCommand returns "kdyn logs".
func NewLogsCommand(f *cli.Factory) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   logsUsage,
		Short: "Print the logs for a container in a pod",
		Long: `Print the logs of a container in a pod, or of the pods a workload or
service selects (one of them, or every one with --all-pods), as kubectl logs
does. A bare NAME is a pod. Without -c, the container is the one the pod's
kubectl.kubernetes.io/default-container annotation names, else its first.

The log is read from the pod's node through the API server (the pods/log
subresource). With -f it is followed until the container stops or the
command is interrupted; several followed streams are read at once (at most
--max-log-requests). With -l, each selected pod's log is printed, the last
10 lines of each unless --tail says otherwise.

Unlike kubectl, which prints several logs in an order that varies from run
to run, kdyn prints them in a stable order: pods as listed, then each pod's
init containers, containers and ephemeral containers.`,
		Example: `  # The log of pod web-1 (its only or default container)
  kdyn logs web-1

  # One container, with timestamps, the last 20 lines
  kdyn logs web-1 -c sidecar --timestamps --tail=20

  # Follow the log of one pod of a deployment
  kdyn logs -f deployment/web

  # Every container of every pod labelled app=web, each line prefixed
  kdyn logs -l app=web --all-containers --prefix

  # The previous instance of a restarted container
  kdyn logs -p web-1 -c app`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return QuietIfInterrupted(cmd.Context(), runLogs(cmd, f, o, args))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.container, "container", "c", "", "Print the logs of this container")
	fl.BoolVar(&o.allContainers, "all-containers", false, "Get all containers' logs in the pod(s).")
	fl.BoolVar(&o.allPods, "all-pods", false, "Get logs from all pod(s). Sets prefix to true.")
	fl.BoolVarP(&o.follow, "follow", "f", false, "Specify if the logs should be streamed.")
	fl.BoolVarP(&o.previous, "previous", "p", false, "If true, print the logs for the previous instance of the container in a pod if it exists.")
	fl.BoolVar(&o.timestamps, "timestamps", false, "Include timestamps on each line in the log output")
	fl.BoolVar(&o.prefix, "prefix", false, "Prefix each log line with the log source (pod name and container name)")
	fl.BoolVar(&o.ignoreErrors, "ignore-errors", false, "If watching / following pod logs, allow for any errors that occur to be non-fatal")
	fl.BoolVar(&o.insecure, "insecure-skip-tls-verify-backend", false, "Skip verifying the identity of the kubelet that logs are requested from.")
	fl.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fl.DurationVar(&o.since, "since", 0, "Only return logs newer than a relative duration like 5s, 2m, or 3h. Defaults to all logs. Only one of since-time / since may be used.")
	fl.StringVar(&o.sinceTime, "since-time", "", "Only return logs after a specific date (RFC3339). Defaults to all logs. Only one of since-time / since may be used.")
	fl.Int64Var(&o.tail, "tail", -1, "Lines of recent log file to display. Defaults to -1 with no selector, showing all log lines otherwise 10, if a selector is provided.")
	fl.Int64Var(&o.limitBytes, "limit-bytes", 0, "Maximum bytes of logs to return. Defaults to no limit.")
	fl.IntVar(&o.maxRequests, "max-log-requests", 5, "Specify maximum number of concurrent logs to follow when using by a selector. Defaults to 5.")
	addPodTimeoutFlag(cmd, &o.podTimeout, 20*time.Second)
	return cmd
}

// logRequest is one container's log to read.
type logRequest struct {
	pod       string
	namespace string
	container string
}

func runLogs(cmd *cobra.Command, f *cli.Factory, o *logsOptions, args []string) error {
	ctx := cmd.Context()
	switch len(args) {
	case 0:
		if o.selector == "" {
			return cli.Usagef("%s", logsUsageError)
		}
	case 1:
		if o.selector != "" {
			return cli.Usagef("only a selector (-l) or a POD name is allowed")
		}
	case 2:
		if cmd.Flags().Changed("container") {
			return errors.New("only one of -c or an inline [CONTAINER] arg is allowed")
		}
		o.container = args[1]
		args = args[:1]
	default:
		return cli.Usagef("%s", logsUsageError)
	}
	if o.allPods {
		o.prefix = true
	}
	if err := o.validate(cmd); err != nil {
		return err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()

	var pods []*unstructured.Unstructured
	if o.selector != "" {
		list, err := dc.Resource(podsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: o.selector})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", ns)
		}
		for i := range list.Items {
			pods = append(pods, &list.Items[i])
		}
	} else {
		obj, err := object(ctx, f, dc, args)
		if err != nil {
			if apierrors.IsNotFound(err) && !strings.Contains(args[0], "/") {
				// kubectl's words for a pod that is not there
				return &cli.ExitError{Code: cli.ExitCode(err, f.Flags.ExitCodes),
					Err: fmt.Errorf("error from server (NotFound): %s in namespace %q", err.Error(), ns)}
			}
			return err
		}
		if pods, err = podsFor(ctx, dc, obj, forLogs, o.podTimeout, "get the logs from"); err != nil {
			return err
		}
		if len(pods) > 1 && !o.allPods {
			fmt.Fprintf(errOut, "Found %d pods, using pod/%s\n", len(pods), pods[0].GetName())
			pods = pods[:1]
		}
	}

	var requests []logRequest
	for _, pod := range pods {
		rs, err := o.requestsFor(pod, errOut)
		if err != nil {
			return err
		}
		requests = append(requests, rs...)
	}
	if o.follow && len(requests) > 1 && len(requests) > o.maxRequests {
		return fmt.Errorf("you are attempting to follow %d log streams, but maximum allowed concurrency is %d, use --max-log-requests to increase the limit",
			len(requests), o.maxRequests)
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.follow && len(requests) > 1 {
		return o.followAll(ctx, rc, requests, out, errOut)
	}
	for _, r := range requests {
		if err := o.consume(ctx, rc, r, out, errOut); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the flags as kubectl does.
func (o *logsOptions) validate(cmd *cobra.Command) error {
	if o.sinceTime != "" && o.since != 0 {
		return errors.New("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	if o.sinceTime != "" {
		if _, err := time.Parse(time.RFC3339, o.sinceTime); err != nil {
			return fmt.Errorf("--since-time must be an RFC3339 time: %v", err)
		}
	}
	if o.allContainers && o.container != "" {
		return fmt.Errorf("--all-containers=true should not be specified with container name %s", o.container)
	}
	// 0 means no limit and all logs, as in kubectl; --since is rounded
	// to seconds first
	if o.limitBytes < 0 {
		return errors.New("--limit-bytes must be greater than 0")
	}
	if o.since != 0 && o.since.Round(time.Second) < time.Second {
		return errors.New("--since must be greater than 0")
	}
	if o.tail < -1 {
		return errors.New("--tail must be greater than or equal to -1")
	}
	if o.podTimeout <= 0 {
		return errors.New("--pod-running-timeout must be higher than zero")
	}
	if o.selector != "" && o.tail == -1 && !cmd.Flags().Changed("tail") {
		o.tail = 10
	}
	return nil
}

// requestsFor lists the logs to read of one pod: the named or default
// container, or with --all-containers every container in kubectl's order.
func (o *logsOptions) requestsFor(pod *unstructured.Unstructured, errOut io.Writer) ([]logRequest, error) {
	req := func(c string) logRequest {
		return logRequest{pod: pod.GetName(), namespace: pod.GetNamespace(), container: c}
	}
	if o.allContainers {
		var out []logRequest
		for _, c := range containersOf(pod) {
			out = append(out, req(c.name))
		}
		return out, nil
	}
	name := o.container
	if name == "" {
		var err error
		if name, err = defaultContainer(pod, errOut, o.allPods); err != nil {
			return nil, err
		}
	}
	if !findContainer(pod, name) {
		return nil, fmt.Errorf("container %s is not valid for pod %s out of: %s", name, pod.GetName(), allContainerNames(pod))
	}
	return []logRequest{req(name)}, nil
}

// stream opens one container's log.
func (o *logsOptions) stream(ctx context.Context, rc *rest.Client, r logRequest) (io.ReadCloser, error) {
	req := rc.Get().Version("v1").Namespace(r.namespace).Resource("pods").Name(r.pod).SubResource("log").Param("container", r.container)
	if o.follow {
		req.Param("follow", "true")
	}
	if o.previous {
		req.Param("previous", "true")
	}
	if o.timestamps {
		req.Param("timestamps", "true")
	}
	if o.since != 0 {
		req.Param("sinceSeconds", strconv.FormatInt(int64(o.since.Round(time.Second)/time.Second), 10))
	}
	if o.sinceTime != "" {
		req.Param("sinceTime", o.sinceTime)
	}
	if o.tail >= 0 {
		req.Param("tailLines", strconv.FormatInt(o.tail, 10))
	}
	if o.limitBytes > 0 {
		req.Param("limitBytes", strconv.FormatInt(o.limitBytes, 10))
	}
	if o.insecure {
		req.Param("insecureSkipTLSVerifyBackend", "true")
	}
	return req.Stream(ctx)
}

// consume copies one log to out line by line (prefixed with --prefix).
// Following, it retries every second up to --pod-running-timeout while the
// server answers with an error (a container not started yet), as kubectl
// does; with --ignore-errors an error is printed and the log skipped.
func (o *logsOptions) consume(ctx context.Context, rc *rest.Client, r logRequest, out, errOut io.Writer) error {
	copyOnce := func() error {
		body, err := o.stream(ctx, rc, r)
		if err != nil {
			return err
		}
		defer body.Close()
		prefix := ""
		if o.prefix {
			prefix = "[pod/" + r.pod + "/" + r.container + "] "
		}
		br := bufio.NewReader(body)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if prefix != "" {
					line = append([]byte(prefix), line...)
				}
				if _, werr := out.Write(line); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	if !o.follow {
		err := copyOnce()
		if err != nil && o.ignoreErrors {
			fmt.Fprintf(out, "error: %v\n", err) // on stdout, as kubectl writes it
			return nil
		}
		return err
	}
	deadline := time.Now().Add(o.podTimeout)
	for {
		err := copyOnce()
		if err == nil {
			return nil
		}
		if o.ignoreErrors {
			fmt.Fprintf(out, "error: %v\n", err)
			return nil
		}
		fmt.Fprintln(errOut, err.Error())
		var status apierrors.APIStatus
		if !errors.As(err, &status) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// followAll follows several logs at once, writing whole lines to out; the
// first error ends them all.
func (o *logsOptions) followAll(ctx context.Context, rc *rest.Client, requests []logRequest, out, errOut io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lw := &cli.LockedWriter{W: out}
	var wg sync.WaitGroup
	errs := make(chan error, len(requests))
	for _, r := range requests {
		wg.Go(func() {
			if err := o.consume(ctx, rc, r, lw, errOut); err != nil {
				errs <- err
				cancel()
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
