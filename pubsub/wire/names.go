package wire

import (
	"fmt"
	"strings"
)

// Name is a parsed full resource name: projects/Project/{subscriptions|topics}/ID.
type Name struct {
	Project, Kind, ID string
}

// String returns the full resource name.
func (n Name) String() string { return "projects/" + n.Project + "/" + n.Kind + "/" + n.ID }

// NameError is the error of a string that is not a full resource name of its kind.
type NameError struct {
	Name, Kind string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("%q is not projects/PROJECT/%s/ID", e.Name, e.Kind)
}

// ParseSubscription parses projects/P/subscriptions/S.
func ParseSubscription(s string) (Name, error) { return parseName(s, "subscriptions") }

// ParseTopic parses projects/P/topics/T.
func ParseTopic(s string) (Name, error) { return parseName(s, "topics") }

func parseName(s, kind string) (Name, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[2] != kind || parts[1] == "" || parts[3] == "" {
		return Name{}, &NameError{Name: s, Kind: kind}
	}
	return Name{Project: parts[1], Kind: kind, ID: parts[3]}, nil
}
