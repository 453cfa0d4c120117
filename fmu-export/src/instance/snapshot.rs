//! FMU states of an [`Instance`]: the saved copy (`fmi2GetFMUstate`), its serialization (a
//! magic, the GUID, the machine state header, then the model's fields through
//! [`crate::StateVisitor`]) and its checks when read back.

use super::{Instance, Res, State};
use crate::model::CoSimModel;
use crate::state::{Reader, StateVisitor, Writer};

/// A saved state: everything that changes over a run.
#[derive(Clone)]
pub(super) struct Saved<M> {
    pub(super) model: M,
    pub(super) state: State,
    pub(super) time: f64,
    pub(super) start_time: f64,
    pub(super) stop_time: Option<f64>,
    pub(super) dirty: bool,
    pub(super) terminated: bool,
}

const STATE_MAGIC: &[u8; 8] = b"HCFMUst1";

impl<M: CoSimModel> Instance<M> {
    pub(super) fn saved(&self) -> Saved<M> {
        Saved {
            model: self.model.clone(),
            state: self.state,
            time: self.time,
            start_time: self.start_time,
            stop_time: self.stop_time,
            dirty: self.dirty,
            terminated: self.terminated,
        }
    }

    pub(super) fn encode(&self, s: &Saved<M>) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes.extend_from_slice(STATE_MAGIC);
        w.string(&mut self.table.description.guid.clone());
        let mut model = s.model.clone();
        let mut head = header_fields(s);
        visit_header(&mut w, &mut head);
        model.visit_state(&mut w);
        w.bytes
    }

    pub(super) fn decode(&self, bytes: &[u8]) -> Res<Saved<M>> {
        let guid = &self.table.description.guid;
        if bytes.get(..8) != Some(STATE_MAGIC.as_slice()) {
            return Err(format!("the {} bytes given are not a serialized FMU state of this exporter", bytes.len()));
        }
        let mut r = Reader::new(&bytes[8..]);
        let mut their_guid = String::new();
        r.string(&mut their_guid);
        if &their_guid != guid {
            return Err(format!("the serialized state belongs to FMU GUID {their_guid}, this FMU is {guid}"));
        }
        let mut s = self.saved();
        let mut head = header_fields(&s);
        visit_header(&mut r, &mut head);
        s.model.visit_state(&mut r);
        // Not serialized: a deserialized state has not terminated the simulation.
        s.terminated = false;
        if let Some(e) = r.error {
            return Err(e);
        }
        if r.remaining() != 0 {
            return Err(format!("serialized state has {} unexpected trailing bytes", r.remaining()));
        }
        apply_header(&mut s, &head)?;
        Ok(s)
    }

    pub(super) fn restore(&mut self, s: &Saved<M>) {
        self.model = s.model.clone();
        self.state = s.state;
        self.time = s.time;
        self.start_time = s.start_time;
        self.stop_time = s.stop_time;
        self.dirty = s.dirty;
        self.terminated = s.terminated;
    }
}

/// Header fields of a serialized state: (state, time, start, stop defined, stop, dirty).
struct Header {
    state: i64,
    time: f64,
    start: f64,
    has_stop: bool,
    stop: f64,
    dirty: bool,
}

fn header_fields<M>(s: &Saved<M>) -> Header {
    Header {
        state: i64::from(s.state.bit()),
        time: s.time,
        start: s.start_time,
        has_stop: s.stop_time.is_some(),
        stop: s.stop_time.unwrap_or(0.0),
        dirty: s.dirty,
    }
}

fn visit_header(v: &mut dyn StateVisitor, h: &mut Header) {
    v.integer(&mut h.state);
    v.real(&mut h.time);
    v.real(&mut h.start);
    v.boolean(&mut h.has_stop);
    v.real(&mut h.stop);
    v.boolean(&mut h.dirty);
}

fn apply_header<M>(s: &mut Saved<M>, h: &Header) -> Res<()> {
    let all = [
        State::Instantiated,
        State::InitializationMode,
        State::StepComplete,
        State::StepFailed,
        State::StepCanceled,
        State::Terminated,
        State::Error,
        State::EventMode,
        State::ContinuousTimeMode,
    ];
    s.state = all
        .into_iter()
        .find(|st| i64::from(st.bit()) == h.state)
        .ok_or_else(|| format!("serialized state has an invalid machine state {}", h.state))?;
    s.time = h.time;
    s.start_time = h.start;
    s.stop_time = h.has_stop.then_some(h.stop);
    s.dirty = h.dirty;
    Ok(())
}
