(* The supply-demand theorem for a finite bipartite transport (Gale 1957; the
   fractional Hall theorem), over every real field.

   Sources x of a finite type X have supplies a x >= 0, sinks y of a finite type Y
   have demands b y >= 0, and a source x may ship only to the sinks of N x.
   If Hall's condition holds -- every set A of sources has a(A) <= b(N(A)), N(A)
   the sinks that some source of A may ship to -- then there is a transport f >= 0
   that ships exactly a x out of every source, only along allowed pairs, and at
   most b y into every sink ([gale]).

   The proof is the classical induction (on the number of non-zero supplies and
   demands), written for amounts in an ordered field: take a source x0 with
   a x0 > 0 and a sink y0 in N x0 with b y0 > 0, and ship
   t = min(a x0, b y0, slack of the sets A not containing x0 with y0 in N(A))
   from x0 to y0, the slack of A being b(N(A)) - a(A).  Hall's condition still
   holds.  Either x0 or y0 is exhausted (fewer non-zero amounts), or some set A
   became tight (a(A) = b(N(A))): then A, shipped into N(A), and the other
   sources, shipped into what A left of the demands, are two smaller problems
   that both satisfy Hall's condition.  No compactness or limit is used, so the
   theorem holds in every real field (the rationals included).

   Duality.v derives from it the strong duality (star) of docs/theory.md,
   Theorem 2.2 (max-flow/min-cut on the network draft sets -> tokens). *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Sums.

Variable R : realFieldType.

Lemma sum_option (T : finType) (F : option T -> R) :
  \sum_o F o = F None + \sum_y F (Some y).
Proof.
have -> : index_enum (option_finType T) = None :: map Some (index_enum T).
  by rewrite /index_enum !unlock /= /option_enum unlock.
by rewrite big_cons big_map.
Qed.

Lemma sum_if1 (Z : finType) (P : pred Z) z0 (t : R) :
  \sum_(z | P z) (if z == z0 then t else 0) = if P z0 then t else 0.
Proof.
rewrite -big_mkcondr /=; case: ifP => h.
  by rewrite (big_pred1 z0) // => z; rewrite /= andbC; case: eqP => // ->.
by rewrite big_pred0 // => z; case: eqP => [->|]; rewrite ?h ?andbF.
Qed.

Lemma sum_subset (Z : finType) (g : Z -> R) (A B : {set Z}) :
  (forall z, 0 <= g z) -> A \subset B -> \sum_(z in A) g z <= \sum_(z in B) g z.
Proof.
move=> g0 /subsetP AB; rewrite [X in X <= _]big_mkcond [X in _ <= X]big_mkcond.
apply: ler_sum => z _; case: ifP => [/AB ->|_]; first exact: lexx.
by case: ifP.
Qed.

Lemma sum_setI_setD (Z : finType) (g : Z -> R) (A B : {set Z}) :
  \sum_(z in A) g z = \sum_(z in A :&: B) g z + \sum_(z in A :\: B) g z.
Proof. exact: big_setID. Qed.

(* non-negative terms with sum 0 (or at most 0) are all 0 *)
Lemma sum_ge0_eq0 (Z : finType) (P : pred Z) (g : Z -> R) :
  (forall z, 0 <= g z) -> \sum_(z | P z) g z <= 0 -> forall z, P z -> g z = 0.
Proof.
move=> g0 s0 z Pz.
have s0' : \sum_(z | P z) g z = 0 by apply/le_anti; rewrite s0 sumr_ge0.
by move/psumr_eq0P: s0' => /(_ (fun z _ => g0 z)) ->.
Qed.

End Sums.

Section Gale.

Variables (R : realFieldType) (X Y : finType) (N : X -> {set Y}).

(* N(A): the sinks some source of A may ship to *)
Definition nbhd (A : {set X}) : {set Y} := \bigcup_(x in A) N x.

(* Hall's condition: a(A) <= b(N(A)) for every set A of sources *)
Definition hall (a : X -> R) (b : Y -> R) :=
  forall A : {set X}, \sum_(x in A) a x <= \sum_(y in nbhd A) b y.

(* f ships a x out of every source x, only to N x, and at most b y into every sink y *)
Definition transport (a : X -> R) (b : Y -> R) (f : X -> Y -> R) :=
  [/\ forall x y, 0 <= f x y,
      forall x y, y \notin N x -> f x y = 0,
      forall x, \sum_y f x y = a x
    & forall y, \sum_x f x y <= b y].

Definition supp (Z : finType) (g : Z -> R) := [set z | g z != 0].
Definition measure (a : X -> R) (b : Y -> R) := (#|supp a| + #|supp b|)%N.

Lemma nbhd_sub (A B : {set X}) : A \subset B -> nbhd A \subset nbhd B.
Proof.
move/subsetP=> AB; apply/subsetP => y /bigcupP [x xA yx].
by apply/bigcupP; exists x => //; apply: AB.
Qed.

Lemma nbhd_mem x (A : {set X}) : x \in A -> N x \subset nbhd A.
Proof. by move=> xA; apply/subsetP => y yx; apply/bigcupP; exists x. Qed.

Lemma nbhdU (A B : {set X}) : nbhd (A :|: B) = nbhd A :|: nbhd B.
Proof. exact: bigcup_setU. Qed.

Lemma transport0 a (b : Y -> R) : (forall x, a x = 0) -> (forall y, 0 <= b y) ->
  transport a b (fun _ _ => 0).
Proof. by move=> az b0; split=> // [x|y]; rewrite big1 ?az. Qed.

(* a transport into b ships nothing to a sink outside N(A) from the sources of A,
   when it ships nothing out of the other sources *)
Lemma transport_col0 a b f (A : {set X}) y :
  transport a b f -> (forall x, x \notin A -> a x = 0) -> y \notin nbhd A ->
  forall x, f x y = 0.
Proof.
case=> f0 fN frow _ aA yA x.
case: (boolP (y \in N x)) => [yx|]; last exact: fN.
case: (boolP (x \in A)) => [xA|xA].
  by case/negP: yA; apply: (subsetP (nbhd_mem xA)).
have : \sum_y f x y <= 0 by rewrite frow aA.
by move/(sum_ge0_eq0 (f0 x)); apply.
Qed.

Lemma supp_sub (Z : finType) (g h : Z -> R) :
  (forall z, h z = 0 -> g z = 0) -> supp g \subset supp h.
Proof.
move=> gh; apply/subsetP => z; rewrite !inE; apply: contra => /eqP hz.
by rewrite gh.
Qed.

Lemma supp_proper (Z : finType) (g h : Z -> R) z0 :
  (forall z, h z = 0 -> g z = 0) -> h z0 != 0 -> g z0 = 0 ->
  supp g \proper supp h.
Proof.
move=> gh hz0 gz0; apply/properP; split; first exact: supp_sub.
by exists z0; rewrite !inE ?gz0 ?eqxx.
Qed.

(* the tight-set split: a tight set B and the other sources, handled by induction *)
Lemma gale_split n a b (B : {set X}) x0 x1 :
  (forall a' b', (measure a' b' <= n)%N -> (forall x, 0 <= a' x) ->
     (forall y, 0 <= b' y) -> hall a' b' -> exists f, transport a' b' f) ->
  (measure a b <= n.+1)%N -> (forall x, 0 <= a x) -> (forall y, 0 <= b y) ->
  hall a b -> \sum_(x in B) a x = \sum_(y in nbhd B) b y ->
  x0 \notin B -> a x0 != 0 -> x1 \in B -> a x1 != 0 ->
  exists f, transport a b f.
Proof.
move=> IH hm a0 b0 hH tight x0B ax0 x1B ax1.
pose a1 x := if x \in B then a x else 0.
pose a2 x := if x \in B then 0 else a x.
have a10 x : 0 <= a1 x by rewrite /a1; case: ifP.
have a20 x : 0 <= a2 x by rewrite /a2; case: ifP.
have sa1 : forall A : {set X}, \sum_(x in A) a1 x = \sum_(x in A :&: B) a x.
  move=> A; rewrite (sum_setI_setD a1 A B) [X in _ + X]big1 ?addr0.
    by apply: eq_bigr => x; rewrite inE /a1 => /andP [_ ->].
  by move=> x; rewrite inE /a1 => /andP [/negbTE -> _].
have sa2 : forall A : {set X}, \sum_(x in A) a2 x = \sum_(x in A :\: B) a x.
  move=> A; rewrite (sum_setI_setD a2 A B) big1 ?add0r.
    by apply: eq_bigr => x; rewrite inE /a2 => /andP [/negbTE -> _].
  by move=> x; rewrite inE /a2 => /andP [_ ->].
(* the sources of B, into b *)
have [f1 hf1] : exists f, transport a1 b f.
  apply: IH => //; last first.
    move=> A; rewrite sa1; apply: le_trans (hH _) _.
    by apply: sum_subset => //; apply: nbhd_sub; apply: subsetIl.
  rewrite -ltnS; apply: leq_trans hm; rewrite /measure ltn_add2r.
  by apply: proper_card; apply: (@supp_proper _ a1 a x0) => [x|//|];
    rewrite /a1 ?(negbTE x0B) //; case: ifP.
case: (hf1) => f10 f1N f1row f1col.
pose b2 y := b y - \sum_x f1 x y.
have b20 y : 0 <= b2 y by rewrite subr_ge0.
have f1out y : y \notin nbhd B -> forall x, f1 x y = 0.
  by apply: (transport_col0 hf1) => x; rewrite /a1 => /negbTE ->.
(* the other sources, into what B left *)
have [f2 [f20 f2N f2row f2col]] : exists f, transport a2 b2 f.
  apply: IH => //; last first.
    move=> A; rewrite sa2.
    have e1 : \sum_(x in A :\: B) a x = \sum_(x in A :|: B) a x - \sum_(x in B) a x.
      rewrite (sum_setI_setD a (A :|: B) B).
      have -> : (A :|: B) :&: B = B by apply/setIidPr; apply: subsetUr.
      by rewrite setDUl setDv setU0 addrC addKr.
    rewrite e1 tight ler_subl_addr; apply: le_trans (hH (A :|: B)) _.
    rewrite (sum_setI_setD b (nbhd (A :|: B)) (nbhd B)).
    have -> : nbhd (A :|: B) :&: nbhd B = nbhd B.
      by apply/setIidPr; apply: nbhd_sub; apply: subsetUr.
    rewrite addrC ler_add2r.
    have -> : \sum_(y in nbhd (A :|: B) :\: nbhd B) b y =
              \sum_(y in nbhd (A :|: B) :\: nbhd B) b2 y.
      apply: eq_bigr => y; rewrite inE => /andP [yB _].
      by rewrite /b2 big1 ?subr0 // => x _; apply: f1out.
    apply: sum_subset => //; rewrite nbhdU setDUl setDv setU0.
    exact: subsetDl.
  rewrite -ltnS; apply: leq_trans hm; rewrite /measure -addSn leq_add //.
    by apply: proper_card; apply: (@supp_proper _ a2 a x1) => [x|//|];
      rewrite /a2 ?x1B //; case: ifP.
  apply: subset_leq_card; apply: supp_sub => y by0.
  have cy : \sum_x f1 x y = 0.
    apply/le_anti; rewrite sumr_ge0 ?andbT => [|x _]; last exact: f10.
    by have := f1col y; rewrite by0.
  by rewrite /b2 by0 cy subr0.
exists (fun x y => f1 x y + f2 x y); split.
- by move=> x y; rewrite addr_ge0.
- by move=> x y yx; rewrite f1N // f2N // addr0.
- by move=> x; rewrite big_split /= f1row f2row /a1 /a2; case: ifP; rewrite ?addr0 ?add0r.
- move=> y; rewrite big_split /=; apply: le_trans (ler_add (lexx _) (f2col y)) _.
  by rewrite /b2 addrC subrK.
Qed.

(* one unit of flow t shipped from x0 to y0, with Hall's condition kept *)
Section Push.

Variables (a : X -> R) (b : Y -> R) (x0 : X) (y0 : Y) (t : R).
Hypotheses (a0 : forall x, 0 <= a x) (b0 : forall y, 0 <= b y) (hH : hall a b).
Hypotheses (y0x0 : y0 \in N x0) (t0 : 0 <= t) (ta : t <= a x0) (tb : t <= b y0).
Hypothesis tslack : forall A : {set X}, x0 \notin A -> y0 \in nbhd A ->
  t <= \sum_(y in nbhd A) b y - \sum_(x in A) a x.

Definition apush x := a x - (if x == x0 then t else 0).
Definition bpush y := b y - (if y == y0 then t else 0).

Lemma apush_ge0 x : 0 <= apush x.
Proof. by rewrite /apush; case: eqP => [->|_]; rewrite ?subr_ge0 ?subr0. Qed.

Lemma bpush_ge0 y : 0 <= bpush y.
Proof. by rewrite /bpush; case: eqP => [->|_]; rewrite ?subr_ge0 ?subr0. Qed.

Lemma sum_apush (A : {set X}) :
  \sum_(x in A) apush x = \sum_(x in A) a x - (if x0 \in A then t else 0).
Proof. by rewrite /apush sumrB sum_if1. Qed.

Lemma sum_bpush (S : {set Y}) :
  \sum_(y in S) bpush y = \sum_(y in S) b y - (if y0 \in S then t else 0).
Proof. by rewrite /bpush sumrB sum_if1. Qed.

Lemma hall_push : hall apush bpush.
Proof.
move=> A; rewrite sum_apush sum_bpush.
case: (boolP (x0 \in A)) => [x0A|x0A].
  have -> : y0 \in nbhd A by apply: (subsetP (nbhd_mem x0A)).
  by rewrite ler_add2r.
rewrite subr0; case: ifP => [y0A|_]; last by rewrite subr0.
by rewrite ler_subr_addl -ler_subr_addr; apply: tslack.
Qed.

Lemma transport_push f : transport apush bpush f ->
  transport a b (fun x y => f x y + (if (x == x0) && (y == y0) then t else 0)).
Proof.
case=> f0 fN frow fcol; split.
- by move=> x y; rewrite addr_ge0 //; case: ifP.
- move=> x y yx; rewrite fN // add0r; case: eqP => [ex|//]; case: eqP => [ey|//].
  by case/negP: yx; rewrite ex ey.
- move=> x; rewrite big_split /= frow /apush.
  case: (boolP (x == x0)) => _ /=.
    by rewrite (eq_bigr (fun y => if y == y0 then t else 0)) // sum_if1 /= subrK.
  by rewrite subr0 big1 ?addr0.
- move=> y; rewrite big_split /=; apply: le_trans (ler_add (fcol y) (lexx _)) _.
  rewrite /bpush (eq_bigr (fun x => if x == x0 then (if y == y0 then t else 0) else 0)).
    by rewrite sum_if1 /=; case: ifP; rewrite subrK.
  by move=> x _; case: eqP; case: eqP.
Qed.

End Push.

Lemma gale_rec n a b : (measure a b <= n)%N ->
  (forall x, 0 <= a x) -> (forall y, 0 <= b y) -> hall a b ->
  exists f, transport a b f.
Proof.
elim: n a b => [|n IH] a b hm a0 b0 hH.
  have az x : a x = 0.
    apply/eqP; apply: contraT => ax.
    have : x \in supp a by rewrite inE.
    by move: hm; rewrite leqn0 addn_eq0 => /andP [/eqP/cards0_eq -> _]; rewrite inE.
  by exists (fun _ _ => 0); apply: transport0.
case: (boolP [forall x, a x == 0]) => [/forallP az|].
  by exists (fun _ _ => 0); apply: transport0 => // x; apply/eqP.
case/forallPn => x0 ax0.
have ax0p : 0 < a x0 by rewrite lt_def ax0 a0.
have [y0 y0x0 by0] : exists2 y0, y0 \in N x0 & 0 < b y0.
  case: (boolP [exists y in N x0, 0 < b y]) => [/existsP [y /andP [yx by0]]|].
    by exists y.
  move/existsPn => hb.
  have h := hH [set x0]; rewrite big_set1 /nbhd big_set1 big1 in h; last first.
    by move=> y yx; apply/le_anti; rewrite b0 andbT leNgt; move: (hb y); rewrite yx.
  by move: (lt_le_trans ax0p h); rewrite ltxx.
have by0' : b y0 != 0 by rewrite gt_eqF.
pose slack A := \sum_(y in nbhd A) b y - \sum_(x in A) a x.
pose C (A : {set X}) := (x0 \notin A) && (y0 \in nbhd A).
pose m := Num.min (a x0) (b y0).
have m0 : 0 <= m by rewrite le_minr !ltW.
have slack0 A : 0 <= slack A by rewrite subr_ge0.
(* measure of a push: never larger *)
have push_sub t : supp (apush a x0 t) \subset supp a /\ supp (bpush b y0 t) \subset supp b.
  split; apply: supp_sub => z; rewrite /apush /bpush;
    case: eqP => [->|_]; rewrite ?subr0 //.
    by move=> h; move: ax0; rewrite h eqxx.
  by move=> h; move: by0'; rewrite h eqxx.
have push_le t : (measure (apush a x0 t) (bpush b y0 t) <= measure a b)%N.
  by case: (push_sub t) => h1 h2; apply: leq_add; apply: subset_leq_card.
have hpush t : 0 <= t -> t <= a x0 -> t <= b y0 ->
    (forall A, C A -> t <= slack A) ->
    [/\ forall x, 0 <= apush a x0 t x, forall y, 0 <= bpush b y0 t y,
        hall (apush a x0 t) (bpush b y0 t)
      & forall f, transport (apush a x0 t) (bpush b y0 t) f -> exists f, transport a b f].
  move=> t0 ta tb ts.
  have ts' (A : {set X}) : x0 \notin A -> y0 \in nbhd A -> t <= slack A.
    by move=> h1 h2; apply: ts; rewrite /C h1 h2.
  split=> [x|y||f hf]; first exact: apush_ge0; first exact: bpush_ge0.
    by apply: hall_push.
  by eexists; apply: transport_push hf.
case: (boolP [exists A, C A && (slack A < m)]) => [/existsP [A0 /andP [CA0 sA0]]|].
  (* some set becomes tight: push its slack, then split *)
  case: (arg_minP slack CA0) => B /andP [x0B y0B] Bmin.
  have sBm : slack B < m by apply: le_lt_trans (Bmin _ CA0) sA0.
  set t := slack B in sBm Bmin.
  move: sBm; rewrite lt_minr => /andP [ta tb].
  have [ha hb hh hf] := hpush t (slack0 B) (ltW ta) (ltW tb) Bmin.
  have tight : \sum_(x in B) apush a x0 t x = \sum_(y in nbhd B) bpush b y0 t y.
    by rewrite sum_apush sum_bpush (negbTE x0B) y0B subr0 /t /slack opprB addrC subrK.
  have [x1 x1B ax1] : exists2 x1, x1 \in B & apush a x0 t x1 != 0.
    case: (boolP [exists x in B, apush a x0 t x != 0]) => [/existsP [x /andP [xB ax]]|].
      by exists x.
    move/existsPn => hz.
    have : \sum_(x in B) apush a x0 t x = 0.
      by rewrite big1 // => x xB; move: (hz x); rewrite xB /= negbK => /eqP.
    rewrite tight => s0.
    have := @sum_subset _ _ (bpush b y0 t) [set y0] (nbhd B) hb.
    rewrite sub1set y0B big_set1 s0 => /(_ isT).
    by rewrite /bpush eqxx subr_le0 leNgt tb.
  have [f hf0] : exists f, transport (apush a x0 t) (bpush b y0 t) f.
    apply: (@gale_split n _ _ B x0 x1) => //.
    - exact: leq_trans (push_le t) hm.
    - by rewrite /apush eqxx subr_eq0 gt_eqF.
  exact: hf hf0.
(* no set becomes tight before x0 or y0 is exhausted: push m *)
move/existsPn => hC.
have ms A : C A -> m <= slack A.
  by move=> CA; move: (hC A); rewrite CA /= -leNgt.
have ma : m <= a x0 by rewrite le_minl lexx.
have mb : m <= b y0 by rewrite le_minl lexx orbT.
have [ha hb hh hf] := hpush m m0 ma mb ms.
have [sa sb] := push_sub m.
case: (lerP (a x0) (b y0)) => h.
  have em : m = a x0 by rewrite /m minEle h.
  have [f hf0] : exists f, transport (apush a x0 m) (bpush b y0 m) f.
    apply: IH => //; rewrite -ltnS; apply: leq_trans hm.
    rewrite /measure -addSn leq_add ?subset_leq_card //; apply: proper_card.
    by apply/properP; split => //; exists x0; rewrite !inE ?ax0 // /apush eqxx -em subrr eqxx.
  exact: hf hf0.
have em : m = b y0 by rewrite /m minEle leNgt h.
have [f hf0] : exists f, transport (apush a x0 m) (bpush b y0 m) f.
  apply: IH => //; rewrite -ltnS; apply: leq_trans hm.
rewrite /measure -addnS leq_add ?subset_leq_card //; apply: proper_card.
  by apply/properP; split => //; exists y0; rewrite !inE ?by0' // /bpush eqxx -em subrr eqxx.
exact: hf hf0.
Qed.

(* Gale's supply-demand theorem: under Hall's condition, a transport exists *)
Theorem gale a b : (forall x, 0 <= a x) -> (forall y, 0 <= b y) -> hall a b ->
  exists f, transport a b f.
Proof. exact: (@gale_rec (measure a b)). Qed.
End Gale.

Print Assumptions gale.
