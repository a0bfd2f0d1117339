// The CORE-V backend and its registration. The registration is a static initializer
// that nothing references: the build links this library whole-archive, or the linker
// drops it and programs that delegate to "CoreVBackend" fail to load.
#include "CoreVBackend.h"

namespace executorch {
namespace backends {
namespace corev {

using ::executorch::runtime::ArrayRef;
using ::executorch::runtime::BackendExecutionContext;
using ::executorch::runtime::BackendInitContext;
using ::executorch::runtime::CompileSpec;
using ::executorch::runtime::DelegateHandle;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;
using ::executorch::runtime::Span;

bool CoreVBackend::is_available() const {
  return true;
}

Result<DelegateHandle*> CoreVBackend::init(
    BackendInitContext& /*context*/,
    FreeableBuffer* processed,
    ArrayRef<CompileSpec> /*compile_specs*/) const {
  // Nothing is lowered to this backend yet: a delegate blob means a newer
  // ahead-of-time flow than this runtime understands.
  if (processed != nullptr && processed->size() != 0) {
    return Error::NotSupported;
  }
  return nullptr;
}

Error CoreVBackend::execute(
    BackendExecutionContext& /*context*/,
    DelegateHandle* /*handle*/,
    Span<EValue*> /*args*/) const {
  return Error::NotSupported;
}

void CoreVBackend::destroy(DelegateHandle* /*handle*/) const {}

}  // namespace corev
}  // namespace backends
}  // namespace executorch

namespace {
executorch::backends::corev::CoreVBackend backend;
executorch::runtime::Backend backend_id{"CoreVBackend", &backend};
// volatile: with LTO the unused result must not let the call be dropped.
volatile auto registered = executorch::runtime::register_backend(backend_id);
}  // namespace
