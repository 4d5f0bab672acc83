#include "{file}"
