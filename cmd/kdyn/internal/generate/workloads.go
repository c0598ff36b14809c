package generate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var (
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobGVR        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronJobGVR    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
)

// commandArgs are the words after "--": the container's command.
func commandArgs(cmd *cobra.Command, args []string) []string {
	if n := cmd.ArgsLenAtDash(); n >= 0 && n < len(args) {
		return args[n:]
	}
	return nil
}

// container is a typed Container as kubectl fills it: name, image,
// command, ports, and the empty resources a struct always prints.
func container(name, image string, command []string, ports []any) fields {
	c := fields{{"name", name}, {"image", image}}
	if len(command) > 0 {
		c = append(c, field{"command", command})
	}
	if len(ports) > 0 {
		c = append(c, field{"ports", ports})
	}
	return append(c, field{"resources", fields{}})
}

// podTemplate is a PodTemplateSpec: its metadata (always printed, empty
// without labels), then the pod spec's containers and restart policy.
func podTemplate(labels map[string]string, containers []any, restart string) fields {
	md := fields{}
	if len(labels) > 0 {
		md = fields{{"labels", labels}}
	}
	spec := fields{{"containers", containers}}
	if restart != "" {
		spec = append(spec, field{"restartPolicy", restart})
	}
	return fields{{"metadata", md}, {"spec", spec}}
}

// imageContainerName is the container name kubectl derives from an image:
// its last path element without tag or digest; a name with '.' or '_'
// gets them changed to '-' and a random suffix, as kubectl does.
func imageContainerName(image string) string {
	name := image[strings.LastIndex(image, "/")+1:]
	name, _, _ = strings.Cut(name, ":")
	name, _, _ = strings.Cut(name, "@")
	if strings.ContainsAny(name, "_.") {
		name = strings.NewReplacer("_", "-", ".", "-").Replace(name) + "-" + cli.RandomSuffix(5)
	}
	return name
}

func newDeploymentCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var images []string
	var port, replicas int32
	cmd := &cobra.Command{
		Use:     "deployment NAME --image=image -- [COMMAND] [args...]",
		Aliases: []string{"deploy"},
		Short:   "Create a deployment with the specified name",
		Long: `Create a Deployment whose pods run the images given (one container each,
named after its image), labelled and selected by app=NAME. With
--dry-run=client -o yaml (or json) the output is byte for byte kubectl's.`,
		Example: `  # A deployment named my-dep that runs the busybox image
  kdyn create deployment my-dep --image=busybox

  # With a command
  kdyn create deployment my-dep --image=busybox -- date

  # Three replicas exposing port 5701
  kdyn create deployment my-dep --image=busybox --replicas=3 --port=5701`,
		RunE: func(cmd *cobra.Command, args []string) error {
			command := commandArgs(cmd, args)
			if len(images) > 1 && len(command) > 0 {
				return errors.New("cannot specify multiple --image options and command")
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: deploymentGVR, kind: "Deployment", namespaced: true, failure: "failed to create deployment: ",
				build: func(name, ns string) (*object, error) {
					labels := map[string]string{"app": name}
					containers := []any{}
					for i, image := range images {
						var ports []any
						if i == 0 && port >= 0 {
							ports = []any{fields{{"containerPort", port}}}
						}
						containers = append(containers, container(imageContainerName(image), image, command, ports))
					}
					spec := fields{
						{"replicas", replicas},
						{"selector", fields{{"matchLabels", labels}}},
						{"template", podTemplate(labels, containers, "")},
						{"strategy", fields{}},
					}
					return &object{gvr: deploymentGVR, kind: "Deployment", name: name, namespace: ns, labels: labels,
						body: fields{{"spec", spec}, {"status", fields{}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&images, "image", nil, "The image to run; repeat for a pod of several containers.")
	_ = cmd.MarkFlagRequired("image")
	fl.Int32Var(&port, "port", -1, "The containerPort of the first container.")
	fl.Int32VarP(&replicas, "replicas", "r", 1, "Number of replicas.")
	o.addFlags(cmd)
	return cmd
}

func newJobCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var image, from string
	cmd := &cobra.Command{
		Use:   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		Short: "Create a job with the specified name",
		Long: `Create a Job that runs one container of the image (restartPolicy Never), or,
with --from=cronjob/NAME, a Job from a CronJob's job template (owned by the
CronJob, annotated cronjob.kubernetes.io/instantiate=manual), as the
CronJob controller would start it. With --dry-run=client -o yaml (or json)
the output is byte for byte kubectl's.`,
		Example: `  # A job that prints the date
  kdyn create job my-job --image=busybox -- date

  # A job from a cron job
  kdyn create job test-job --from=cronjob/a-cronjob`,
		RunE: func(cmd *cobra.Command, args []string) error {
			command := commandArgs(cmd, args)
			if (image == "") == (from == "") {
				return errors.New("either --image or --from must be specified")
			}
			if len(command) > 0 && from != "" {
				return errors.New("cannot specify --from and command")
			}
			ctx := cmd.Context()
			return o.run(ctx, f, cmd, args, generator{
				gvr: jobGVR, kind: "Job", namespaced: true, failure: "failed to create job: ",
				build: func(name, ns string) (*object, error) {
					if from != "" {
						return jobFromCronJob(ctx, f, from, name, ns)
					}
					template := podTemplate(nil, []any{container(name, image, command, nil)}, "Never")
					return &object{gvr: jobGVR, kind: "Job", name: name, namespace: ns,
						body: fields{{"spec", fields{{"template", template}}}, {"status", fields{}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&image, "image", "", "The image to run.")
	fl.StringVar(&from, "from", "", "The CronJob to create the Job from (cronjob/NAME).")
	o.addFlags(cmd)
	return cmd
}

// jobFromCronJob reads the CronJob from names and builds the Job kubectl
// builds from it: the job template's labels, its annotations and
// cronjob.kubernetes.io/instantiate=manual, a controller reference to the
// CronJob, and the template's spec as the server sent it.
func jobFromCronJob(ctx context.Context, f *cli.Factory, from, name, ns string) (*object, error) {
	matches, err := f.Resolve(ctx, []string{from})
	if err != nil {
		return nil, err
	}
	if len(matches) != 1 || matches[0].Name == "" {
		return nil, errors.New("from must be an existing cronjob")
	}
	m := matches[0]
	if m.GVK.GroupKind() != (schema.GroupKind{Group: "batch", Kind: "CronJob"}) {
		return nil, fmt.Errorf("unknown object type *%s.%s", m.GVK.Version, m.GVK.Kind)
	}
	rc, err := f.RESTClient()
	if err != nil {
		return nil, err
	}
	readNS, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	raw, err := cli.ResourceRequest(rc.Get(), cronJobGVR, readNS).Name(m.Name).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	cj := gjson.ParseBytes(raw)
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Get("spec.jobTemplate.metadata.annotations").Map() {
		annotations[k] = v.String()
	}
	var labels map[string]string
	if l := cj.Get("spec.jobTemplate.metadata.labels"); l.Exists() {
		if err := json.Unmarshal([]byte(l.Raw), &labels); err != nil {
			return nil, err
		}
	}
	owner := fields{{"apiVersion", "batch/v1"}, {"kind", "CronJob"}, {"name", cj.Get("metadata.name").String()},
		{"uid", cj.Get("metadata.uid").String()}, {"controller", true}}
	spec := json.RawMessage(cj.Get("spec.jobTemplate.spec").Raw)
	if len(spec) == 0 {
		spec = json.RawMessage("{}")
	}
	return &object{gvr: jobGVR, kind: "Job", name: name, namespace: ns, labels: labels, annotations: annotations,
		ownerReferences: []any{owner}, body: fields{{"spec", spec}, {"status", fields{}}}}, nil
}

func newCronJobCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var image, schedule, restart string
	cmd := &cobra.Command{
		Use:     "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...]",
		Aliases: []string{"cj"},
		Short:   "Create a cron job with the specified name",
		Long: `Create a CronJob that runs one container of the image on the schedule (restart
policy OnFailure unless --restart=Never). With --dry-run=client -o yaml (or
json) the output is byte for byte kubectl's.`,
		Example: `  # A cron job that prints the date every minute
  kdyn create cronjob my-job --image=busybox --schedule="*/1 * * * *" -- date`,
		RunE: func(cmd *cobra.Command, args []string) error {
			command := commandArgs(cmd, args)
			if restart == "" {
				restart = "OnFailure"
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: cronJobGVR, kind: "CronJob", namespaced: true, failure: "failed to create cronjob: ",
				build: func(name, ns string) (*object, error) {
					template := podTemplate(nil, []any{container(name, image, command, nil)}, restart)
					jobTemplate := fields{{"metadata", fields{{"name", name}}}, {"spec", fields{{"template", template}}}}
					return &object{gvr: cronJobGVR, kind: "CronJob", name: name, namespace: ns,
						body: fields{{"spec", fields{{"schedule", schedule}, {"jobTemplate", jobTemplate}}}, {"status", fields{}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&image, "image", "", "The image to run.")
	_ = cmd.MarkFlagRequired("image")
	fl.StringVar(&schedule, "schedule", "", "The schedule, in cron format, the job runs on.")
	_ = cmd.MarkFlagRequired("schedule")
	fl.StringVar(&restart, "restart", "", "The job's restart policy: OnFailure (the default) or Never.")
	o.addFlags(cmd)
	return cmd
}
