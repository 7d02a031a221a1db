package deploy

// Build is how the zone builds and starts a source deploy, as it detected it in the tree
// (the zone's buildplan; tori.json's commands win there): what it saw (node, python, go,
// procfile, tori.json), the build command ("" when nothing is built) and the start command.
// Nil until the zone reports it, and for static and image deploys.
type Build struct {
	Detected string
	Command  string
	Start    string
}
