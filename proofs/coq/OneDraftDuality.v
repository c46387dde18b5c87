(* Strong duality of (star) for one draft (k = 1): the coupling of speculative
   sampling attains p(S) + 1 - q(S) at S = {y : p y <= q y}, so
     max over couplings of P(Y = X)  =  sum_x min(p x, q x)
                                     =  min over S of p(S) + 1 - q(S).
   With Duality.weak_duality this is (star) for every draft law of one draft,
   with the optimal coupling written out.  Strong duality for every k and every
   draft law is Duality.strong_duality_star (through Gale's theorem, Gale.v). *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Speculative Duality.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section OneDraft.

Variables (R : realFieldType) (T : finType).
Variables (p q : T -> R).
Hypotheses (p_ge0 : forall y, 0 <= p y) (q_ge0 : forall y, 0 <= q y).
Hypotheses (p_sum1 : \sum_y p y = 1) (q_sum1 : \sum_y q y = 1).

Local Notation m x := (Num.min (p x) (q x)).
Local Notation single := (fun x : T => [set x]).

(* the coupling realised by speculative sampling *)
Definition spec_coupling (x y : T) : R :=
  (if x == y then m x else 0) + (q x - m x) * residual p q y.

Lemma min_ge0 x : 0 <= m x.
Proof. by rewrite le_minr p_ge0 q_ge0. Qed.

Lemma q_sub_min_ge0 x : 0 <= q x - m x.
Proof. by rewrite subr_ge0 le_minl lexx orbT. Qed.

Lemma residual_ge0 y : 0 <= residual p q y.
Proof.
rewrite /residual divr_ge0 ?excess_ge0 // /excess_mass.
by apply: sumr_ge0 => z _; apply: excess_ge0.
Qed.

Lemma sum_q_sub_min : \sum_x (q x - m x) = excess_mass p q.
Proof. by rewrite sumrB q_sum1 excess_massE. Qed.

Lemma sum_residual : excess_mass p q != 0 -> \sum_y residual p q y = 1.
Proof. by move=> h; rewrite /residual -mulr_suml divff. Qed.

Lemma spec_coupling_ok : is_coupling p q spec_coupling.
Proof.
split=> [x y|x|y].
- apply: addr_ge0; last by apply: mulr_ge0; [exact: q_sub_min_ge0|exact: residual_ge0].
  by case: ifP => _; rewrite ?lexx ?min_ge0.
- rewrite big_split /= (bigD1 x) //= eqxx big1 ?addr0 => [|y /negbTE];
    last by rewrite eq_sym => ->.
  rewrite -mulr_sumr.
  have [m0|m0] := eqVneq (excess_mass p q) 0.
    have : \sum_z (q z - m z) = 0 by rewrite sum_q_sub_min.
    move/psumr_eq0P => /(_ (fun z _ => q_sub_min_ge0 z) x isT) hx.
    by rewrite hx mul0r addr0; apply/eqP; rewrite eq_sym -subr_eq0 hx.
  by rewrite sum_residual // mulr1 addrC subrK.
- rewrite big_split /= (bigD1 y) //= eqxx big1 ?addr0 => [|x /negbTE -> //].
  rewrite -mulr_suml sum_q_sub_min excess_massE // /residual.
  exact (spec_formula q p_sum1 y).
Qed.

Lemma spec_coupling_acceptance : acceptance single spec_coupling = overlap p q.
Proof.
rewrite /acceptance /overlap; apply: eq_bigr => x _.
rewrite big_set1 /spec_coupling eqxx /residual mulrA.
suff -> : (q x - m x) * excess p q x = 0 by rewrite mul0r addr0.
rewrite /excess !minEle !maxEle; case: lerP => h.
  by rewrite subr_le0 h mulr0.
by rewrite subr_le0 leNgt h /= subrr mul0r.
Qed.

(* S = {y : p y <= q y} attains the overlap in (star) *)
Lemma cut_overlap :
  cut p q single [set y | p y <= q y] = overlap p q.
Proof.
rewrite cutE // /pmass /overlap [RHS](bigID (mem [set y | p y <= q y])) /=.
congr (_ + _).
  by apply: eq_bigr => y; rewrite inE minEle => ->.
apply: eq_big => [x|x]; first by rewrite sub1set.
by rewrite sub1set inE minEle => /negbTE ->.
Qed.

(* strong duality of (star) for one draft. *)
Theorem one_draft_strong_duality : strong_duality p q single.
Proof.
exists spec_coupling; split; first exact: spec_coupling_ok.
by exists [set y | p y <= q y]; rewrite spec_coupling_acceptance cut_overlap.
Qed.

(* alpha* for one draft is the overlap: attained by speculative sampling, and no
   coupling does better; the overlap is the minimum of (star). *)
Theorem one_draft_alpha_star :
  [/\ exists2 pi, is_coupling p q pi & acceptance single pi = overlap p q,
      forall pi, is_coupling p q pi -> acceptance single pi <= overlap p q
    & (exists S, cut p q single S = overlap p q) /\
      forall S, overlap p q <= cut p q single S].
Proof.
split.
- by exists spec_coupling; [exact: spec_coupling_ok|exact: spec_coupling_acceptance].
- by move=> pi hpi; rewrite -cut_overlap; apply: weak_duality.
- split; first by exists [set y | p y <= q y]; apply: cut_overlap.
  move=> S; rewrite -spec_coupling_acceptance.
  by apply: weak_duality => //; apply: spec_coupling_ok.
Qed.

End OneDraft.

Print Assumptions one_draft_strong_duality.
Print Assumptions one_draft_alpha_star.
