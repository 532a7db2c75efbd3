//! What stops a command that works on a store and asks model servers (the audit, the profile),
//! as far as they share it: [`CommandError`].

use crate::EngineError;
pub use agora_records::families::FamilyError;

/// What stops a command that works on a store and asks model servers, as far as the audit and
/// the profile share it: the store refused or failing, a family of tables too new, the model
/// session not prepared, an output not written. Each of those crates' own error holds it
/// ([`from_command_errors`](crate::from_command_errors)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The store could not be opened, or was refused.
    #[error(transparent)]
    Store(#[from] agora_records::StoreError),
    /// The store's tables of a family are of a version this build cannot use.
    #[error(transparent)]
    Family(#[from] FamilyError),
    /// The model session could not be prepared (a declaration, a server, the reply cache).
    #[error(transparent)]
    Session(#[from] crate::llm_seats::PrepareError),
    /// An output file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A result could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The runtime that asks the models could not start or failed.
    #[error("{0}")]
    Runtime(String),
}

impl CommandError {
    /// Whether the error is the user's input (exit 2): a store refused as given, tables newer
    /// than this build, a model declaration that cannot be used.
    pub fn is_bad_input(&self) -> bool {
        match self {
            CommandError::Store(e) => e.is_refusal(),
            CommandError::Family(e) => e.is_refusal(),
            CommandError::Session(crate::llm_seats::PrepareError::Declaration(_)) => true,
            CommandError::Session(crate::llm_seats::PrepareError::Store(EngineError::Store(e))) => e.is_refusal(),
            _ => false,
        }
    }

    /// An error writing the file or directory at `path`.
    pub fn write(path: &std::path::Path) -> impl Fn(std::io::Error) -> CommandError + '_ {
        move |source| CommandError::Write { path: path.to_path_buf(), source }
    }
}

/// Implements `From` for a crate's error type `$t` (with a `Command(CommandError)` variant) from
/// each error a [`CommandError`] holds, so that `?` carries them through it.
#[macro_export]
macro_rules! from_command_errors {
    ($t:ty) => {
        $crate::from_command_errors!($t:
            $crate::CommandError,
            $crate::StoreError,
            $crate::command_error::FamilyError,
            $crate::llm_seats::PrepareError,
            serde_json::Error
        );
    };
    ($t:ty: $($e:ty),+) => {
        $(
            impl From<$e> for $t {
                fn from(e: $e) -> $t {
                    <$t>::Command($crate::CommandError::from(e))
                }
            }
        )+
    };
}
