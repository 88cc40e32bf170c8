//! Query-string parameters (`sluice_query::params`, pure and fuzzed) and their refusal as a
//! 400 Validation error.

use sluice_query::params::Invalid;
pub(crate) use sluice_query::params::Params;

use crate::ApiError;

impl From<Invalid> for ApiError {
    fn from(Invalid(issues): Invalid) -> Self {
        ApiError::Validation(issues)
    }
}
