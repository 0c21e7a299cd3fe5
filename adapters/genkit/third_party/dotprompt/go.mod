module github.com/google/dotprompt/go

go 1.23.8

require (
	github.com/go-viper/mapstructure/v2 v2.4.0
	github.com/goccy/go-yaml v1.17.1
	github.com/invopop/jsonschema v0.14.0
	github.com/mbleigh/raymond v0.0.0-20250414171441-6b3a58ab9e0a
	github.com/pb33f/ordered-map/v2 v2.3.1
)
