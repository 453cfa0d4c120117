//! [`OneByOne`]: an instance that ignores [`FmuInstance::overlap_steps`], so that isolated instances
//! step one after the other as before the Jacobi scheme overlapped them: the baseline of the
//! `--isolate` rows of `cosim bench`.

use master::error::Result;
use master::fmu::Call;
use master::FmuInstance;

/// Forwards every call to `inner`; its steps never overlap.
pub struct OneByOne(pub Box<dyn FmuInstance>);

impl FmuInstance for OneByOne {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        self.0.execute(call)
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.0.can_interpolate_inputs()
    }
    fn call_stats(&self) -> (f64, u64) {
        self.0.call_stats()
    }
}
