# Sourced by the checks that SwiftPM cannot run (the UIKit type-check, the README's UIKit blocks, the fuzzer):
# compiles the package's modules in dependency order with swiftc, each from its folder under Sources/.
#   build_modules OUT KIND -- FLAGS... -- MODULE...
# KIND is `module` (a .swiftmodule to type-check against) or `library` (a static library too, to link).
# Extra sources for a module come from the array named EXTRA_<Module>, if set.
build_modules() {
  local out=$1 kind=$2
  shift 3
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  mkdir -p "$out"
  local module sources extra
  for module in "$@"; do
    mapfile -t sources < <(find "Sources/$module" -name '*.swift' | sort)
    extra="EXTRA_${module}[@]"
    sources+=("${!extra:-}")
    [ -z "${sources[-1]}" ] && unset 'sources[-1]'
    if [ "$kind" = library ]; then
      swiftc -emit-library -static -emit-module -module-name "$module" -package-name simplesource -parse-as-library "${flags[@]}" -I "$out" \
        -emit-module-path "$out/$module.swiftmodule" -o "$out/lib$module.a" "${sources[@]}"
    else
      swiftc -emit-module -module-name "$module" -package-name simplesource -parse-as-library "${flags[@]}" -I "$out" \
        -emit-module-path "$out/$module.swiftmodule" "${sources[@]}"
    fi
  done
}
