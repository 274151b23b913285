# Sourced by scripts/demo.sh ($THEURIAN, $PROJECT set): reviewed knowledge from the bundled sample migrations.
cp -R fixtures/knowledge/sample/.theurian/migrations fixtures/knowledge/sample/.theurian/knowledge "$PROJECT/.theurian/"
"$THEURIAN" migrate apply --project "$PROJECT"
"$THEURIAN" index build --project "$PROJECT"
