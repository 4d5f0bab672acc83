#include "{file}" // {digest:016x}
