// --inputs DIR | --random [--dim name=value,...] [--seed S]: declared once for run and profile.
#include <filesystem>

#include "command.h"
#include "parity/error.h"
#include "parity/refrt/random_inputs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"

namespace fs = std::filesystem;

namespace parity::cli {

void add_input_options(CLI::App* cmd, InputChoice& c) {
  CLI::App* group = cmd->add_option_group("inputs", "give exactly one of --inputs DIR or --random");
  group->add_option("--inputs", c.inputs_dir, "folder of input_<i>.pb files")->option_text("DIR");
  group->add_flag("--random", c.random,
                  "random inputs from the declared types (floats in [-1, 1), integers in [0, 4))");
  group->require_option(1);
  cmd->add_option("--dim", c.dims, "with --random: symbolic dim values (default 2)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->option_text("name=value,...");
  cmd->add_option("--seed", c.seed, "with --random: the random seed")->capture_default_str()->option_text("S");
}

std::vector<Tensor> load_inputs(const refrt::Session& session, const InputChoice& c) {
  if (c.random) return refrt::random_inputs(session.inputs(), refrt::parse_dim_overrides(c.dims), c.seed);
  if (!fs::is_directory(c.inputs_dir))
    throw Error({"io", c.inputs_dir}, "is not a directory (expected a folder of input_<i>.pb files)");
  std::vector<Tensor> inputs;
  for (auto& named : read_tensor_dir(c.inputs_dir, "input")) inputs.push_back(std::move(named.tensor));
  return inputs;
}

}  // namespace parity::cli
