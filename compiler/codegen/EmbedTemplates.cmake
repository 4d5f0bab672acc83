# Writes OUTPUT, a C++ source defining cg::codegen::templateText(name) over the
# files in TEMPLATES, so cgc carries its templates inside the binary. The table
# is sorted by name: codegen looks a template up for every statement it
# writes, thousands of times in a large graph, and finds it by halving.
set(sorted ${TEMPLATES})
list(SORT sorted)
set(body "")
foreach(path IN LISTS sorted)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" text)
  string(APPEND body "    {\"${name}\", R\"cg_template(${text})cg_template\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from codegen-templates/ by EmbedTemplates.cmake. Do not edit.
#include \"codegen/Templates.h\"
#include \"support/InternalError.h\"

#include <algorithm>
#include <iterator>
#include <string>

namespace {

struct Template {
  std::string_view name;
  std::string_view text;
};

// Sorted by name.
constexpr Template kTemplates[] = {
${body}};

} // namespace

std::string_view cg::codegen::templateText(std::string_view name) {
  const Template* found = std::lower_bound(
      std::begin(kTemplates), std::end(kTemplates), name,
      [](const Template& entry, std::string_view wanted) { return entry.name < wanted; });
  if (found == std::end(kTemplates) || found->name != name)
    cg::internalError(\"no template named \" + std::string(name));
  return found->text;
}
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
