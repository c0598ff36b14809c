package cli

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// SetLastApplied sets obj's last-applied-configuration annotation to obj's
// own JSON, encoded as kubectl encodes it so that both tools record the
// same bytes: the annotations without that one (an empty map,
// "annotations":{}, when there are no others) and a final newline.
func SetLastApplied(obj *unstructured.Unstructured) error {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	delete(ann, kunstructured.LastAppliedAnnotation)
	obj.SetAnnotations(ann)
	cfg, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("encode the configuration: %w", err)
	}
	ann[kunstructured.LastAppliedAnnotation] = string(cfg) + "\n"
	obj.SetAnnotations(ann)
	return nil
}
