(* Speculative sampling with one draft (Leviathan et al. 2023; Chen et al. 2023):
   it is lossless and its acceptance is the overlap sum_x min(p x, q x).
   Over any real field, any finite token type, laws given as functions
   that are non-negative and sum to 1.  mathcomp's convention x / 0 = 0
   makes the residual law well defined in the degenerate case p = q, where
   the rejection probability 1 - overlap is 0; the theorems cover it. *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Speculative.

Variables (R : realFieldType) (T : finType).
Variables (p q : T -> R).
Hypotheses (p_ge0 : forall y, 0 <= p y) (q_ge0 : forall y, 0 <= q y).
Hypotheses (p_sum1 : \sum_y p y = 1) (q_sum1 : \sum_y q y = 1).

(* the overlap sum_x min(p x, q x) *)
Definition overlap := \sum_x Num.min (p x) (q x).
(* (p y - q y)_+ *)
Definition excess y := Num.max (p y - q y) 0.
(* sum_z (p z - q z)_+ *)
Definition excess_mass := \sum_z excess z.
(* the residual law, drawn after a rejection *)
Definition residual y := excess y / excess_mass.
(* a draft x is accepted with probability min(1, p x / q x) *)
Definition accept_prob x := Num.min 1 (p x / q x).
(* the law of the output token of speculative sampling *)
Definition spec_output y :=
  q y * accept_prob y + (\sum_x q x * (1 - accept_prob x)) * residual y.

Lemma excess_ge0 y : 0 <= excess y.
Proof. by rewrite /excess le_maxr lexx orbT. Qed.

Lemma min_add_excess y : Num.min (p y) (q y) + excess y = p y.
Proof.
rewrite /excess minEle maxEle.
case: (lerP (p y) (q y)) => hpq.
  by rewrite subr_le0 hpq addr0.
rewrite subr_le0 leNgt hpq /=.
by rewrite addrC subrK.
Qed.

Lemma excess_massE : excess_mass = 1 - overlap.
Proof.
rewrite /excess_mass /overlap -p_sum1.
apply/eqP; rewrite eq_sym subr_eq -big_split /=; apply/eqP.
by apply: eq_bigr => y _; rewrite addrC min_add_excess.
Qed.

Lemma q_accept x : q x * accept_prob x = Num.min (p x) (q x).
Proof.
rewrite /accept_prob.
have [->|qx0] := eqVneq (q x) 0.
  rewrite mul0r; apply/esym/eqP; rewrite minEle.
  by case: ifP => h //; rewrite eq_le h p_ge0.
have qpos : 0 < q x by rewrite lt_def qx0 q_ge0.
rewrite !minEle ler_pdivl_mulr // mul1r.
case: (lerP (q x) (p x)) => h1.
  rewrite mulr1; case: lerP => h2 //.
  by apply/eqP; rewrite eq_le h1 h2.
by rewrite (ltW h1) mulrC divfK.
Qed.

(* speculative sampling accepts with probability sum_x min(p x, q x). *)
Theorem spec_acceptance : \sum_x q x * accept_prob x = overlap.
Proof. by apply: eq_bigr => x _; rewrite q_accept. Qed.

Lemma reject_mass : \sum_x q x * (1 - accept_prob x) = excess_mass.
Proof.
transitivity (\sum_x (q x - q x * accept_prob x)).
  by apply: eq_bigr => x _; rewrite mulrBr mulr1.
by rewrite sumrB q_sum1 spec_acceptance excess_massE.
Qed.

(* The closed form of the output law, degenerate case (excess_mass = 0) included:
   min(p_y, q_y) + (1 - sum_x min(p_x, q_x)) (p_y - q_y)_+ / sum_z (p_z - q_z)_+ = p_y. *)
Theorem spec_formula y :
  Num.min (p y) (q y) + (1 - overlap) * (excess y / excess_mass) = p y.
Proof.
rewrite -excess_massE.
have [m0|m0] := eqVneq excess_mass 0.
  have ey0 : excess y = 0.
    move/eqP: m0; rewrite /excess_mass psumr_eq0 => [/allP h|z _].
      by apply/eqP/h; rewrite mem_index_enum.
    exact: excess_ge0.
  by rewrite m0 mul0r addr0 -{2}(min_add_excess y) ey0 addr0.
by rewrite mulrC divfK // min_add_excess.
Qed.

(* speculative sampling is lossless. *)
Theorem spec_lossless y : spec_output y = p y.
Proof.
by rewrite /spec_output q_accept reject_mass excess_massE spec_formula.
Qed.

End Speculative.

Print Assumptions spec_lossless.
Print Assumptions spec_acceptance.
Print Assumptions spec_formula.
