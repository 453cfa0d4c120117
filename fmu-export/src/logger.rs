//! The importer's logger callback, with the categories of `fmi2SetDebugLogging`.

use crate::types::{fmi2CallbackFunctions, Status};
use std::ffi::CString;

/// Log category of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `logStatusWarning`.
    Warning,
    /// `logStatusError`.
    Error,
    /// `logAll`.
    All,
}

impl Category {
    /// The category name of the model description.
    pub fn name(self) -> &'static str {
        match self {
            Self::Warning => "logStatusWarning",
            Self::Error => "logStatusError",
            Self::All => "logAll",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Self::Warning => 1,
            Self::Error => 2,
            Self::All => 4,
        }
    }

    /// Parses a category name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Warning, Self::Error, Self::All].into_iter().find(|c| c.name() == name)
    }
}

/// Sends messages to the importer's logger callback.
pub struct Logger {
    callbacks: Option<fmi2CallbackFunctions>,
    /// The FMI 3.0 `fmi3LogMessageCallback` and its `instanceEnvironment`, for instances made
    /// by `fmi3InstantiateCoSimulation` (then `callbacks` is None).
    fmi3: Option<(crate::types3::LogMessageCallback, *mut std::ffi::c_void)>,
    instance_name: CString,
    enabled: u8,
    /// Messages sent, kept when no callback was given (tests read them).
    pub history: Vec<String>,
    keep_history: bool,
}

// SAFETY: the callback struct holds C function pointers and the importer's environment pointer.
// FMI 2.0 requires the importer to call one instance from one thread at a time, so the logger,
// owned by the instance, is never used concurrently; moving it between threads is allowed.
unsafe impl Send for Logger {}

impl Logger {
    /// A logger for `instance_name`; `logging_on` enables every category.
    pub fn new(callbacks: Option<fmi2CallbackFunctions>, instance_name: &str, logging_on: bool) -> Self {
        let keep_history = callbacks.and_then(|c| c.logger).is_none();
        Self {
            callbacks,
            fmi3: None,
            instance_name: CString::new(instance_name.replace('\0', " ")).unwrap_or_default(),
            enabled: if logging_on { 0b111 } else { 0 },
            history: Vec::new(),
            keep_history,
        }
    }

    /// A logger for an FMI 3.0 instance: messages go to `callback` (not a printf format, so
    /// `%` is sent as is) with `environment`.
    pub fn new_fmi3(
        callback: Option<crate::types3::LogMessageCallback>,
        environment: *mut std::ffi::c_void,
        instance_name: &str,
        logging_on: bool,
    ) -> Self {
        let mut log = Self::new(None, instance_name, logging_on);
        if let Some(cb) = callback {
            log.fmi3 = Some((cb, environment));
            log.keep_history = false;
        }
        log
    }

    /// `fmi2SetDebugLogging`: with no categories, all of them follow `on`.
    pub fn set_categories(&mut self, on: bool, categories: &[Category]) {
        let mask = if categories.is_empty() { 0b111 } else { categories.iter().fold(0, |m, c| m | c.bit()) };
        if on {
            self.enabled |= mask;
        } else {
            self.enabled &= !mask;
        }
    }

    /// Whether messages of `category` are sent. Errors always are: an importer that turned debug
    /// logging off still needs to know why a call failed.
    pub fn enabled(&self, category: Category) -> bool {
        category == Category::Error || self.enabled & category.bit() != 0 || self.enabled & Category::All.bit() != 0
    }

    /// Sends `message` with `status` under `category`, if enabled.
    pub fn log(&mut self, status: Status, category: Category, message: &str) {
        if !self.enabled(category) {
            return;
        }
        if self.keep_history {
            self.history.push(format!("[{}] {}", category.name(), message));
            if self.history.len() > 1000 {
                self.history.remove(0);
            }
        }
        if let Some((cb, env)) = self.fmi3 {
            let (Ok(msg), Ok(cat)) = (CString::new(message.replace('\0', " ")), CString::new(category.name())) else {
                return;
            };
            // SAFETY: `cb` is the importer's fmi3LogMessageCallback (non-variadic); the strings
            // are valid NUL-terminated strings that outlive the call.
            unsafe { cb(env, status, cat.as_ptr(), msg.as_ptr()) };
            return;
        }
        let Some(cb) = self.callbacks else { return };
        let Some(logger) = cb.logger else { return };
        // The message is a printf format string for the importer: escape '%'.
        let escaped = message.replace('%', "%%").replace('\0', " ");
        let (Ok(msg), Ok(cat)) = (CString::new(escaped), CString::new(category.name())) else { return };
        // SAFETY: `logger` is the importer's callback of type fmi2CallbackLogger; all string
        // arguments are valid NUL-terminated strings that outlive the call, and the message has
        // no unescaped '%', so no variadic argument is read.
        unsafe {
            logger(cb.component_environment, self.instance_name.as_ptr(), status, cat.as_ptr(), msg.as_ptr());
        }
    }
}
