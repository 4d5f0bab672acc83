// Plain C++ errors are reported as Clang reports them.
#include <cg/cg.hpp>

struct CG_ACTOR Broken {
  int id(int x) { return x }  // expected-error {{expected ';' after return statement}}
};
