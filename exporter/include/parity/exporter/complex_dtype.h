// torch's name of a complex dtype, by the export schema's ScalarType number; "" for a real one. The exporter
// writes it into the model's metadata and the verifier reads complex outputs by it (docs/complex.md).
#pragma once

namespace parity::pt2 {

inline const char* complex_dtype_name(int torch_dtype) {
  switch (torch_dtype) {
    case 9:
      return "complex32";
    case 10:
      return "complex64";
    case 11:
      return "complex128";
    default:
      return "";
  }
}

}  // namespace parity::pt2
