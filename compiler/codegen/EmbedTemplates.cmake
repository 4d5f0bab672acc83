# Writes OUTPUT, a C++ source defining cg::codegen::templateText(name) over the
# files in TEMPLATES, so cgc carries its templates inside the binary.
set(body "")
foreach(path IN LISTS TEMPLATES)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" text)
  string(APPEND body "  if (name == \"${name}\")\n    return R\"cg_template(${text})cg_template\";\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from codegen-templates/ by EmbedTemplates.cmake. Do not edit.
#include \"codegen/Templates.h\"
#include \"support/InternalError.h\"

#include <string>

std::string_view cg::codegen::templateText(std::string_view name) {
${body}  cg::internalError(\"no template named \" + std::string(name));
}
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
