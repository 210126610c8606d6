package reports

import (
	"os"
	"testing"

	"github.com/stepdoctor/stepdoctor/internal/version"
)

// testVersion is the version every report rendered by these tests names,
// so goldens do not change with the build.
const testVersion = "v0.0.0-test"

func TestMain(m *testing.M) {
	version.Override = testVersion
	os.Exit(m.Run())
}
